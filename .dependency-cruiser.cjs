/**
 * The module rules of docs/architecture.md, checked on every `npm test` (`npm run deps`):
 * bot, queue → approvals → pipeline; views → pipeline (and approvals' types and pure rules); the
 * pipeline does no I/O; the agent client needs no server module (only the protocol and the
 * pipeline); the protocol needs only the pipeline; the MCP server and gateway (src/mcp) are agents:
 * the client, the config's tool registry and the pipeline, never the server's state; no cycles.
 * @type {import('dependency-cruiser').IConfiguration}
 */
const IO_PACKAGES =
  '(^|/)node_modules/(@slack/(bolt|web-api|socket-mode)|bullmq|ioredis|ws|playwright-core)/';
const NODE_IO =
  '^(node:)?(fs|fs/promises|net|http|https|http2|child_process|dgram|dns|tls|cluster|worker_threads)$';

module.exports = {
  forbidden: [
    {
      name: 'no-cycles',
      severity: 'error',
      comment: 'Modules form layers; a cycle means two of them own each other.',
      from: {},
      to: { circular: true },
    },
    {
      name: 'pipeline-is-pure',
      severity: 'error',
      comment: 'src/pipeline does no I/O and imports nothing of ours but itself.',
      from: { path: '^src/pipeline/' },
      to: { pathNot: ['^src/pipeline/', '(^|/)node_modules/(zod|microdiff)/'], dependencyTypesNot: ['core'] },
    },
    {
      name: 'pipeline-no-node-io',
      severity: 'error',
      comment: 'Hashing and signing (node:crypto) are computation; files, sockets and processes are not.',
      from: { path: '^src/pipeline/' },
      to: { dependencyTypes: ['core'], path: NODE_IO },
    },
    {
      name: 'approvals-below-the-edges',
      severity: 'error',
      comment:
        'approvals answers; bot, queue and views render and schedule its answers, never the other way.',
      from: { path: '^src/approvals/' },
      to: { path: ['^src/(bot|queue|client|emulator|devtools)/', '^views/', '^src/main\\.ts$'] },
    },
    {
      name: 'views-are-pure',
      severity: 'error',
      comment: 'views build Block Kit from what they are given: no I/O, no service, no store.',
      from: { path: '^views/' },
      to: {
        path: [
          IO_PACKAGES,
          NODE_IO,
          '^src/(bot|queue|client|emulator|devtools|config/(env|load))',
          '^src/approvals/(service|queries|store|run-commit|outbox|message-ledger|refusal-log|outcomes|journal|journal-reader|audit-[a-z-]+|run-evidence|stored-value)\\.ts$',
          '^src/approvals/use-cases/',
        ],
      },
    },
    {
      name: 'queue-below-bot',
      severity: 'error',
      comment: 'Queues know approvals, not Slack.',
      from: { path: '^src/queue/' },
      to: { path: ['^src/bot/', '^views/'] },
    },
    {
      name: 'client-needs-no-server',
      severity: 'error',
      comment:
        'Agents hold no Redis credentials: the client speaks HTTP and imports none of the server, its queues or Slack.',
      from: { path: '^src/client/' },
      to: {
        path: '^src/(approvals|bot|queue|gateway|config|emulator|devtools)/|^src/main\\.ts$|^views/|(^|/)node_modules/(ioredis|bullmq|@slack)',
      },
    },
    {
      name: 'client-imports-protocol-and-pipeline',
      severity: 'error',
      comment:
        'What an agent runs is the client, the wire protocol and the pure pipeline (digests, receipts).',
      from: { path: '^src/client/' },
      to: {
        pathNot: ['^src/(client|protocol|pipeline)/', '(^|/)node_modules/zod/'],
        dependencyTypesNot: ['core'],
      },
    },
    {
      name: 'protocol-is-shared',
      severity: 'error',
      comment:
        'The wire protocol is shared by the server and the client, so it may import only the pipeline.',
      from: { path: '^src/protocol/' },
      to: {
        pathNot: ['^src/(protocol|pipeline)/', '(^|/)node_modules/zod/'],
        dependencyTypesNot: ['core'],
      },
    },
    {
      name: 'mcp-is-an-agent',
      comment:
        'The MCP server and gateway run beside an agent with its secret alone: they reach Countersign through the client over HTTP, read the config only for its tool registry and policy, and import none of the server, its queues, Redis or Slack.',
      severity: 'error',
      from: { path: '^src/mcp/' },
      to: {
        path: '^src/(approvals|bot|queue|gateway|emulator|devtools)/|^src/main\\.ts$|^views/|(^|/)node_modules/(ioredis|bullmq|@slack)',
      },
    },
    {
      name: 'nothing-imports-mcp',
      comment: 'src/mcp is an edge: only its scripts (npm run mcp) start it.',
      severity: 'error',
      from: { pathNot: ['^src/mcp/', '^scripts/'] },
      to: { path: '^src/mcp/' },
    },
    {
      name: 'config-below-runtime',
      severity: 'error',
      comment: 'Configuration is read by everyone and reads only the pipeline.',
      from: { path: '^src/config/' },
      to: { path: ['^src/(approvals|bot|queue|client|emulator)/', '^views/'] },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { extensions: ['.ts', '.js', '.json'] },
    exclude: { path: '\\.test\\.ts$' },
  },
};
