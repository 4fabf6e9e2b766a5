# One image per app: docker build --build-arg APP=objects (or object-sets) .
# Multi-stage on Node 26 (the Active LTS line; its official images are Debian 13 "trixie"): build
# with dev dependencies, run with production dependencies as a non-root user.
FROM node:26-trixie-slim AS build
WORKDIR /src
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY nest-cli.json tsconfig.json tsconfig.build.json ./
COPY apps ./apps
COPY libs ./libs
COPY scripts ./scripts
RUN npm run build && npm prune --omit=dev

FROM node:26-trixie-slim AS runtime
ARG APP=objects
# 3001 for objects, 3002 for object-sets (their default OBJECTS_PORT / OBJECT_SETS_PORT)
ARG HEALTH_PORT=3001
ENV NODE_ENV=production HOST=0.0.0.0 APP_ENTRY=dist/apps/${APP}/apps/${APP}/src/main.js HEALTH_URL=http://127.0.0.1:${HEALTH_PORT}/health/ready
WORKDIR /app
COPY --from=build --chown=node:node /src/node_modules ./node_modules
COPY --from=build --chown=node:node /src/dist ./dist
COPY --from=build --chown=node:node /src/package.json ./
USER node
EXPOSE 3001 3002
HEALTHCHECK --interval=10s --timeout=3s --retries=5 CMD node -e "fetch(process.env.HEALTH_URL).then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"
CMD ["sh", "-c", "exec node \"$APP_ENTRY\""]
