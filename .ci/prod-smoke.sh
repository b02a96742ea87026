#!/usr/bin/env bash
# The production path the Dockerfile runs, without a container engine: `npm run build`, then in a copy
# holding only package*.json and dist/, `npm ci --omit=dev` and `node dist/src/main.js` against a private
# redis-server (AOF on) and the Slack stand-in; passes when GET /healthz answers 200, `node dist/scripts/mcp.js`
# answers initialize, tools/list and a get_decision signed as the agent (.ci/mcp-smoke.mjs), and SIGTERM stops it.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
WORK=$(mktemp -d)
PIDS=()
cleanup() {
  for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$WORK"
}
trap cleanup EXIT

free_port() { node -e "const s=require('net').createServer().listen(0,'127.0.0.1',()=>{console.log(s.address().port);s.close()})"; }
wait_for() { # file pattern seconds
  for _ in $(seq 1 $(( $3 * 10 ))); do grep -q "$2" "$1" 2>/dev/null && return 0; sleep 0.1; done
  echo "prod-smoke: gave up waiting for '$2' in $1:"; cat "$1"; return 1
}

npm run -s build
mkdir -p "$WORK/app" "$WORK/redis"
cp -r package.json package-lock.json dist "$WORK/app/"
(cd "$WORK/app" && npm ci --omit=dev --ignore-scripts --no-audit --no-fund >/dev/null)
test ! -e "$WORK/app/node_modules/tsx" || { echo "prod-smoke: tsx is installed in production"; exit 1; }

REDIS_PORT=$(free_port)
redis-server --port "$REDIS_PORT" --bind 127.0.0.1 --dir "$WORK/redis" --appendonly yes --save '' >"$WORK/redis.log" 2>&1 &
PIDS+=($!)
# One process each (no npx or subshell in between), so the PIDs kept are the ones to stop.
node --import tsx scripts/slack-standin.ts >"$WORK/slack.log" 2>&1 &
PIDS+=($!)
wait_for "$WORK/slack.log" 'SLACK_API_URL=' 20
SLACK_API_URL=$(sed -n 's/.*SLACK_API_URL=\([^ ]*\).*/\1/p' "$WORK/slack.log")
SLACK_BOT_TOKEN=$(sed -n 's/.*SLACK_BOT_TOKEN=\([^ ]*\).*/\1/p' "$WORK/slack.log")
(cd "$WORK/app" && node dist/scripts/keygen.js --out "$WORK/key.pem" >/dev/null)

PORT=$(free_port)
# `exec`: $! is node itself, so the SIGTERM below reaches the bot, not a subshell that would leave it running.
(cd "$WORK/app" && exec env -i PATH="$PATH" HOME="$WORK" \
  SLACK_BOT_TOKEN="$SLACK_BOT_TOKEN" SLACK_SIGNING_SECRET=prod-smoke-signing-secret SLACK_API_URL="$SLACK_API_URL" \
  REDIS_URL="redis://127.0.0.1:$REDIS_PORT" COUNTERSIGN_SIGNING_KEY_FILE="$WORK/key.pem" \
  COUNTERSIGN_CONFIG=examples/freight/countersign.config.ts FREIGHT_AGENT_SECRET=prod-smoke-agent-secret-0123456789 \
  PORT="$PORT" node --max-semi-space-size=4 --expose-gc dist/src/main.js >"$WORK/bot.log" 2>&1) &
BOT=$!
PIDS+=($BOT)
wait_for "$WORK/bot.log" 'listening' 30
for _ in $(seq 1 50); do
  if node -e "fetch('http://127.0.0.1:$PORT/healthz').then(async (r) => { process.stdout.write(await r.text()); process.exit(r.ok ? 0 : 1); }, () => process.exit(1))" >"$WORK/health.json" 2>/dev/null; then break; fi
  sleep 0.2
done
echo "prod-smoke: /healthz → $(cat "$WORK/health.json" 2>/dev/null || echo 'no 200')"
grep -q '"ok":true' "$WORK/health.json"
# The MCP server as deployed (docs/mcp-server.md): compiled, no tsx, against the running bot.
(cd "$WORK/app" && env -i PATH="$PATH" HOME="$WORK" \
  COUNTERSIGN_URL="http://127.0.0.1:$PORT" COUNTERSIGN_AGENT=freight-ops \
  COUNTERSIGN_AGENT_SECRET=prod-smoke-agent-secret-0123456789 COUNTERSIGN_CONFIG=examples/freight/countersign.config.ts \
  node "$ROOT/.ci/mcp-smoke.mjs" dist/scripts/mcp.js)
test "$(ps -o comm= -p "$BOT")" = node || { echo "prod-smoke: $BOT is not the bot's node process"; exit 1; }
kill -TERM "$BOT"
for _ in $(seq 1 100); do kill -0 "$BOT" 2>/dev/null || break; sleep 0.1; done
if kill -0 "$BOT" 2>/dev/null; then echo "prod-smoke: still running 10 s after SIGTERM"; exit 1; fi
echo "prod-smoke: the compiled build starts from npm ci --omit=dev, answers /healthz and MCP, stops on SIGTERM"
