/**
 * Inputs say what is wrong in the person's terms: at the field, in the currency, with the count of
 * characters — never an internal path, a step prefix or a value in cents.
 */
import { describe, expect, it } from 'vitest';
import { stateValue } from '../../src/emulator/index.ts';
import { diagnostic, validate } from '../../src/pipeline/index.ts';
import { diagnosticsToModalErrors, editResultAck } from '../../views/edit-errors.ts';
import { buildEditModal } from '../../views/edit-modal.ts';
import { readEditSubmission } from '../../views/edit-submission.ts';
import { freightConfig, freightV1, NOW, runView, untouchedState } from './fixtures.ts';

const run = runView(freightV1());
const view = buildEditModal({ run, config: freightConfig, editorId: 'U0FIN1', addedTool: 'issue_refund' });
const read = (overrides: Record<string, Record<string, unknown>>) =>
  readEditSubmission({
    run,
    config: freightConfig,
    stateValues: untouchedState(view, {
      'arg:s4:invoice_id': stateValue.plainText('in_74119'),
      'arg:s4:amount': stateValue.plainText('1489.00'),
      ...overrides,
    }),
    privateMetadata: view.private_metadata!,
  });
const errorsOf = (result: ReturnType<typeof read>) => (result.ok ? {} : result.errors);

describe('reading what was typed in the edit form', () => {
  it('reads an amount as people write it, with a symbol and thousands commas', () => {
    for (const typed of ['1489', '1,489.00', '$1,489.00', '1489 USD']) {
      const result = read({ 'arg:s4:amount': stateValue.plainText(typed) });
      expect(result.ok && result.steps.at(-1)?.args.amount).toBe(148_900);
    }
  });

  it('says at the amount field what is wrong with letters or a decimal comma, instead of "required"', () => {
    expect(errorsOf(read({ 'arg:s4:amount': stateValue.plainText('twelve') }))).toEqual({
      'arg:s4:amount': '"twelve" is not an amount (write it like 1489.00)',
    });
    expect(errorsOf(read({ 'arg:s4:amount': stateValue.plainText('1489,50') }))).toEqual({
      'arg:s4:amount': '"1489,50" is not an amount (write it like 1489.00)',
    });
    expect(errorsOf(read({ 'arg:s4:amount': stateValue.plainText('') }))).toEqual({
      'arg:s4:amount': 'This field is required.',
    });
  });

  it('refuses over-long text at its field with the count, instead of cutting it (note 2,000, ticket 200)', () => {
    expect(errorsOf(read({ 'arg:s1:note': stateValue.plainText('n'.repeat(2001)) }))).toEqual({
      'arg:s1:note': 'This is 2,001 characters; it can hold at most 2,000. Shorten it by 1.',
    });
    expect(errorsOf(read({ 'arg:s3:ticket_id': stateValue.plainText('7'.repeat(250)) }))).toEqual({
      'arg:s3:ticket_id': 'This is 250 characters; it can hold at most 200. Shorten it by 50.',
    });
    // Exactly at the limit is fine.
    expect(read({ 'arg:s1:note': stateValue.plainText('n'.repeat(2000)) }).ok).toBe(true);
  });

  it('the form never cuts text silently: no max_length below Slack’s own, the long-text limit in the hint', () => {
    const note = (view.blocks as { block_id?: string; element?: object; hint?: { text: string } }[]).find(
      (block) => block.block_id === 'arg:s1:note',
    );
    expect(note?.element).not.toHaveProperty('max_length');
    expect(note?.hint?.text).toBe('Up to 2,000 characters.');
  });
});

describe('validation problems in the form', () => {
  const shown = ['arg:s1:ticket_id', 'arg:s1:note', 'arg:s2:window', 'arg:s4:amount', 'remove_steps'];

  it('puts a length limit found when the JSON is read (steps[0].args.note) at the note, in words', () => {
    const tooLong = diagnostic(
      'parse',
      'string_too_long',
      'string at steps[0].args.note is 10001 characters long; the limit is 10000',
      { stepId: '#1', path: ['steps', 0, 'args', 'note'] },
    );
    const errors = diagnosticsToModalErrors([tooLong], shown, ['s1', 's2', 's3']);
    expect(errors).toEqual({
      'arg:s1:note': 'This is 10,001 characters; it can hold at most 10,000. Shorten it by 1.',
    });
    expect(JSON.stringify(errors)).not.toMatch(/steps\[|remove_steps/);
  });

  it('words a type problem at its own field without the step and argument prefix', async () => {
    const base = run.current.plan;
    const steps = base.steps.map(({ id, tool, args }) =>
      id === 's1' ? { id, tool, args: { ...args, note: 'n'.repeat(2001) } } : { id, tool, args },
    );
    const validated = await validate(
      {
        runId: base.runId,
        agent: base.agent,
        expiresAt: base.expiresAt,
        ...(base.context === undefined ? {} : { context: base.context }),
        steps,
      },
      { config: freightConfig.pipeline, now: NOW, edit: { editorId: 'U0OP1', base } },
    );
    if (validated.ok) throw new Error('expected the long note to be refused');
    const ack = editResultAck(
      { kind: 'invalid', phase: validated.phase, diagnostics: validated.diagnostics },
      { inputBlockIds: shown, stepIds: ['s1', 's2', 's3'], baseVersion: 1, now: NOW },
    );
    expect(ack).toEqual({
      response_action: 'errors',
      errors: { 'arg:s1:note': 'This is 2,001 characters; it can hold at most 2,000. Shorten it by 1.' },
    });
  });
});
