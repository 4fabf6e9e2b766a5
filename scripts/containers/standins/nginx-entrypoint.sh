#!/bin/sh
# The stand-in nginx image's entrypoint, for what docker-compose.yml uses of the official one:
# executable /docker-entrypoint.d/*.envsh are sourced (their exports reach the templates), then
# each /etc/nginx/templates/X.template is written to /etc/nginx/conf.d/X with the environment's
# variables (and only those, so nginx's own $variables stay) filled in.
set -eu
for f in $(find /docker-entrypoint.d -follow -maxdepth 1 -type f -name '*.envsh' | sort -V); do
  if [ -x "$f" ]; then
    echo "$0: sourcing $f"
    . "$f"
  fi
done
defined_envs=$(printf '${%s} ' $(env | cut -d= -f1))
for template in /etc/nginx/templates/*.template; do
  [ -f "$template" ] || continue
  output="/etc/nginx/conf.d/$(basename "$template" .template)"
  echo "$0: $template -> $output"
  envsubst "$defined_envs" < "$template" > "$output"
done
exec "$@"
