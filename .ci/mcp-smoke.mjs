// prod-smoke's MCP check, plain JavaScript with no dependencies: speaks JSON-RPC over stdio to
// `node dist/scripts/mcp.js` (argv after the script), which acts as the freight agent against the
// running bot: initialize, tools/list (submit_plan with the registry's tools), and a get_decision
// the bot answers (signed with the agent's secret). Exits 0 when all three answer as expected.
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';

const child = spawn(process.execPath, process.argv.slice(2), { stdio: ['pipe', 'pipe', 'inherit'] });
const answers = new Map();
createInterface({ input: child.stdout }).on('line', (line) => {
  const message = JSON.parse(line);
  answers.get(message.id)?.(message);
});
let nextId = 0;
const request = (method, params) =>
  new Promise((resolve, reject) => {
    const id = ++nextId;
    const timer = setTimeout(() => reject(new Error(`no answer to ${method} in 20 s`)), 20_000);
    answers.set(id, (message) => {
      clearTimeout(timer);
      if (message.error) reject(new Error(`${method}: ${JSON.stringify(message.error)}`));
      else resolve(message.result);
    });
    child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id, method, params })}\n`);
  });
const fail = (why) => {
  console.error(`mcp-smoke: ${why}`);
  child.kill();
  process.exit(1);
};

try {
  const init = await request('initialize', {
    protocolVersion: '2025-06-18',
    capabilities: {},
    clientInfo: { name: 'prod-smoke', version: '0' },
  });
  if (init.serverInfo?.name === undefined) fail(`initialize answered ${JSON.stringify(init)}`);
  child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' })}\n`);
  const { tools } = await request('tools/list', {});
  const names = tools.map((tool) => tool.name).sort();
  if (names.join() !== 'get_decision,report_outcome,submit_plan') fail(`tools/list answered ${names}`);
  const submit = tools.find((tool) => tool.name === 'submit_plan');
  if (!JSON.stringify(submit.inputSchema).includes('reschedule_delivery'))
    fail('submit_plan does not list the registry’s tools');
  const decision = await request('tools/call', {
    name: 'get_decision',
    arguments: { run_id: 'prod-smoke-no-such-run', wait_seconds: 0 },
  });
  const text = decision.content?.[0]?.text ?? '';
  if (!decision.isError || !text.includes('not_found'))
    fail(`get_decision answered ${JSON.stringify(decision)}`);
  console.log(
    `mcp-smoke: ${init.serverInfo.name} answered initialize, tools/list (${names}) and get_decision (not_found from the bot)`,
  );
  child.stdin.end();
} catch (error) {
  fail(error.message);
}
