import { describe, expect, it } from 'vitest';
import { checkView } from '../../src/emulator/block-kit-limits.ts';
import { inputValues, stateValue } from '../../src/emulator/state-values.ts';
import { buildRejectModal, readRejectSubmission } from '../../views/reject-modal.ts';

describe('reject modal', () => {
  const view = buildRejectModal({ runId: 'run-freight-1', version: 2, agent: 'freight-ops' });

  it('asks for a required reason, carrying run and version', () => {
    expect(checkView(view)).toEqual([]);
    expect(view).toMatchInlineSnapshot(`
      {
        "blocks": [
          {
            "elements": [
              {
                "text": "You are rejecting version 2 of the plan from freight-ops (run \`run-freight-1\`). Nothing in it will be executed, and the agent receives your reason.",
                "type": "mrkdwn",
              },
            ],
            "type": "context",
          },
          {
            "block_id": "reason",
            "element": {
              "action_id": "input",
              "min_length": 1,
              "multiline": true,
              "placeholder": {
                "emoji": true,
                "text": "e.g. The refund goes to the wrong account.",
                "type": "plain_text",
              },
              "type": "plain_text_input",
            },
            "hint": {
              "emoji": true,
              "text": "Up to 2,000 characters.",
              "type": "plain_text",
            },
            "label": {
              "emoji": true,
              "text": "Why are you rejecting it?",
              "type": "plain_text",
            },
            "type": "input",
          },
        ],
        "callback_id": "reject_plan",
        "close": {
          "emoji": true,
          "text": "Cancel",
          "type": "plain_text",
        },
        "private_metadata": "{"r":"run-freight-1","v":2}",
        "submit": {
          "emoji": true,
          "text": "Reject",
          "type": "plain_text",
        },
        "title": {
          "emoji": true,
          "text": "Reject plan",
          "type": "plain_text",
        },
        "type": "modal",
      }
    `);
  });

  it('reads the reason, trimmed', () => {
    const stateValues = inputValues({
      reason: stateValue.plainText('  Refund goes to the wrong account.\n'),
    });
    expect(readRejectSubmission({ stateValues, privateMetadata: view.private_metadata! })).toEqual({
      ok: true,
      runId: 'run-freight-1',
      version: 2,
      reason: 'Refund goes to the wrong account.',
    });
  });

  it('asks again for an empty reason', () => {
    const stateValues = inputValues({ reason: stateValue.plainText('   ') });
    expect(readRejectSubmission({ stateValues, privateMetadata: view.private_metadata! })).toEqual({
      ok: false,
      errors: { reason: 'Say why, so the agent (and its developers) can learn from it.' },
    });
    expect(readRejectSubmission({ stateValues: {}, privateMetadata: view.private_metadata! }).ok).toBe(false);
  });

  it('refuses an over-long reason with its count instead of cutting it', () => {
    const stateValues = inputValues({ reason: stateValue.plainText('r'.repeat(2_050)) });
    expect(readRejectSubmission({ stateValues, privateMetadata: view.private_metadata! })).toEqual({
      ok: false,
      errors: { reason: 'This is 2,050 characters; it can hold at most 2,000. Shorten it by 50.' },
    });
  });

  it('refuses metadata it did not write', () => {
    const stateValues = inputValues({ reason: stateValue.plainText('no') });
    expect(readRejectSubmission({ stateValues, privateMetadata: 'nope' })).toMatchObject({
      ok: false,
      errors: { reason: expect.stringContaining('out of date') },
    });
  });
});
