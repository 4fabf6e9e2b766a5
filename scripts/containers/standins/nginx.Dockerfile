# A stand-in for nginx:stable: nginx from Debian 13's packages, logging to the container's
# output, with an entrypoint that does what docker-compose.yml uses of the official image's
# (sources /docker-entrypoint.d/*.envsh, fills /etc/nginx/templates/*.template in).
ARG BASE
FROM ${BASE}
RUN apt-get update \
 && apt-get install -y --no-install-recommends nginx gettext-base \
 && rm -rf /var/lib/apt/lists/* /etc/nginx/sites-enabled/default \
 && ln -sf /dev/stdout /var/log/nginx/access.log \
 && ln -sf /dev/stderr /var/log/nginx/error.log \
 && mkdir -p /docker-entrypoint.d /etc/nginx/templates
COPY nginx-entrypoint.sh /docker-entrypoint.sh
EXPOSE 80
STOPSIGNAL SIGQUIT
ENTRYPOINT ["/docker-entrypoint.sh"]
CMD ["nginx", "-g", "daemon off;"]
