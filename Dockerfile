# Countersign, as deployed: compiled JavaScript on Node 20, production dependencies only, non-root.
#   docker build -t countersign .
#   docker run --env-file .env -p 3000:3000 -v $PWD/countersign-signing-key.pem:/run/secrets/signing-key.pem:ro countersign
# See docs/deploy.md.

# 1. Build: every dependency, then `npm run build` (dist/: src, views, examples, scripts as JavaScript).
FROM node:20-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
# The sources (.dockerignore keeps node_modules, dist, .git, .env and keys out). A countersign.config.ts
# at the project root is compiled too (docs/deploy.md).
COPY . .
RUN npm run build

# 2. Run: production dependencies and dist/ only.
FROM node:20-slim
ENV NODE_ENV=production PORT=3000 COUNTERSIGN_SIGNING_KEY_FILE=/run/secrets/signing-key.pem
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund && npm cache clean --force
COPY --from=build /app/dist ./dist
# The config path the bot reads: the compiled example unless COUNTERSIGN_CONFIG says otherwise.
ENV COUNTERSIGN_CONFIG=examples/freight/countersign.config.ts
USER node
EXPOSE 3000
HEALTHCHECK --interval=15s --timeout=3s --start-period=20s --retries=3 \
  CMD node -e "fetch('http://127.0.0.1:'+(process.env.PORT||3000)+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"
# Signals reach node directly (exec form): SIGTERM stops it within 10 s.
CMD ["node", "--max-semi-space-size=4", "--expose-gc", "dist/src/main.js"]
