/**
 * The demo in a real browser: the stack `npm run demo` starts (emulator with its page, the bot over
 * HTTP with real signatures, Redis, the sample agent), and Chromium clicking what a person would click.
 * Screenshots go to test-artifacts/e2e/ (printed at the start); COUNTERSIGN_UPDATE_DOCS=1 also refreshes
 * the README's: docs/card.png, card-approved.png, diff-message.png and consistency-warning.png.
 */
import { copyFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Browser, Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it, onTestFailed } from 'vitest';
import { type DemoStack, startDemo } from '../../scripts/demo-stack.ts';
import { redisUrl } from '../helpers/redis.ts';
import { artifactsDir, launchChromium, pageText, waitForText } from '../support/browser.ts';

const ARTIFACTS = artifactsDir('e2e');
const UPDATE_DOCS = process.env.COUNTERSIGN_UPDATE_DOCS === '1';

let demo: DemoStack;
/** Launched by the first test that needs it, so a missing Chromium fails each test (never skips one). */
let browser: Promise<Browser> | undefined;

beforeAll(async () => {
  console.log(`e2e screenshots: ${ARTIFACTS}`);
  // The bot answers well within Slack's 3 s; a slow CI machine gets more room.
  demo = await startDemo({ redisUrl: redisUrl(), ackTimeoutMs: 15_000 });
}, 120_000);

afterAll(async () => {
  await (await browser?.catch(() => undefined))?.close();
  await demo?.stop();
}, 60_000);

/** The page as `user`; `live: false` is a page that loaded once and then lost its event stream. */
async function openAs(
  user: string,
  options: { readonly live?: boolean; readonly width?: number } = {},
): Promise<Page> {
  browser ??= launchChromium();
  const context = await (await browser).newContext({
    viewport: { width: options.width ?? 1400, height: 1500 },
    deviceScaleFactor: 1,
    timezoneId: 'UTC',
  });
  if (options.live === false) await context.route('**/page/api/events', (route) => route.abort());
  const page = await context.newPage();
  page.setDefaultTimeout(30_000);
  const problems: string[] = [];
  page.on('pageerror', (error) => problems.push(error.message));
  onTestFailed(async () => {
    const name = `failure-${user}${options.live === false ? '-stale' : ''}.png`;
    await page.screenshot({ path: join(ARTIFACTS, name), fullPage: true });
    console.log(`page as ${user} (${name}):\n${await pageText(page)}\nerrors: ${problems.join('; ')}`);
  });
  await page.goto(`${demo.pageUrl}?as=${user}`);
  return page;
}

/** The sample agent, running: its log lines, its run id once submitted, and its result. */
function startAgent() {
  const lines: string[] = [];
  let submitted: (runId: string) => void = () => {};
  const runId = new Promise<string>((resolve) => {
    submitted = resolve;
  });
  const result = demo.runAgent({
    log: (line) => lines.push(line),
    onSubmitted: submitted,
    timeoutMs: 180_000,
  });
  result.catch(() => {}); // awaited by the test; this keeps an early failure from going unhandled
  return { lines, runId, result };
}

/** The run's card in the channel (its footer names the run). */
function cardOf(page: Page, runId: string): Locator {
  return page.locator('main article.message').filter({ hasText: runId });
}

async function shoot(target: Locator, name: string, docsName?: string): Promise<void> {
  const path = join(ARTIFACTS, name);
  await target.page().mouse.move(0, 0); // no hover highlight in the picture
  await target.screenshot({ path });
  if (UPDATE_DOCS && docsName !== undefined) copyFileSync(path, resolve('docs', docsName));
}

/**
 * Clicks an Approve button whose approval covers an irreversible step: the page shows Slack's confirm
 * dialog first, and the click goes out only from its confirm button.
 */
async function approveConfirmed(button: Locator): Promise<void> {
  await button.click();
  const dialog = button.page().getByRole('alertdialog');
  await waitForText(dialog, 'cannot be undone');
  await dialog.getByRole('button', { name: 'Approve', exact: true }).click();
  await dialog.waitFor({ state: 'detached' });
}

async function switchTo(page: Page, user: string): Promise<void> {
  await page.selectOption('#viewer', user);
  await page.waitForURL(new RegExp(`as=${user}`));
  // The URL changes at once; the page is theirs once their snapshot is drawn (their ephemerals, not
  // the previous person's).
  await page.locator(`[data-viewer="${user}"]`).waitFor({ state: 'attached' });
}

describe('the demo page in Chromium', () => {
  it('switching person while a snapshot is loading ends on the new person (a late snapshot of the previous one is not drawn)', async () => {
    const page = await openAs('U0OP1');
    await page.locator('[data-viewer="U0OP1"]').waitFor({ state: 'attached' });
    // Hold Dana's next snapshot until after the switch to Fay: it must not be drawn, nor bring her back.
    let release: () => void = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    let heldOne = false;
    const danasSnapshot = (url: URL) =>
      url.pathname === '/page/api/state' && url.searchParams.get('user') === 'U0OP1';
    await page.route(danasSnapshot, async (route) => {
      if (heldOne) return route.continue();
      heldOne = true;
      await held;
      await route.continue();
    });
    // A live update (a message posted) makes the page ask for a snapshot as Dana, the current viewer.
    const posted = await fetch(new URL('chat.postMessage', demo.slack.url), {
      method: 'POST',
      headers: { authorization: `Bearer ${demo.slack.botToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({ channel: 'C0OPS', text: 'a live update while switching' }),
    });
    const answer = (await posted.json()) as { ok: boolean };
    expect(answer.ok).toBe(true);
    await expect.poll(() => heldOne).toBe(true);
    await page.selectOption('#viewer', 'U0FIN2');
    release();
    await page.locator('[data-viewer="U0FIN2"]').waitFor({ state: 'attached' });
    await page.waitForTimeout(300); // time for a late snapshot of Dana's to be drawn, if it were
    expect(await page.locator('[data-viewer]').getAttribute('data-viewer')).toBe('U0FIN2');
    expect(await page.locator('#viewer').inputValue()).toBe('U0FIN2');
    await page.context().close();
  });

  it('shows the card; the operator confirms the irreversible approval; the card shows who approved, each outcome and the tally', async () => {
    const agent = startAgent();
    const runId = await agent.runId;
    const page = await openAs('U0OP1', { width: 1100 });
    const card = cardOf(page, runId);
    await waitForText(card, 'freight-ops plan, 3 steps — awaiting approval');
    await waitForText(card, 'Waiting for Dana Ortiz');
    await waitForText(card, 'Irreversible');
    await shoot(card, 'card.png', 'card.png');

    // The reply to the customer cannot be undone: Approve asks first, naming it, and sends nothing yet.
    await card.getByRole('button', { name: 'Approve', exact: true }).click();
    const dialog = page.getByRole('alertdialog', { name: 'Approve an irreversible step?' });
    await waitForText(dialog, 'Reply on ticket #74991 — cannot be undone');
    await shoot(dialog, 'approve-confirm.png');
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    await dialog.waitFor({ state: 'detached' });
    expect((await demo.countersign.approvals.getRun(runId))?.status).toBe('pending');
    await approveConfirmed(card.getByRole('button', { name: 'Approve', exact: true }));
    await waitForText(card, 'freight-ops plan, 3 steps — approved');
    await waitForText(card, 'Approved by Dana Ortiz');
    expect(await card.getByRole('button').count()).toBe(0);

    const { decision, executed } = await agent.result;
    // The agent reported each step: the card shows each outcome and the tally (its last rendering).
    await waitForText(card, '3 of 3 applied');
    expect(((await card.textContent()) ?? '').split('Applied at').length - 1).toBe(3);
    expect(await card.textContent()).not.toMatch(/expires|Applying|Not reported/);
    await shoot(card, 'card-approved.png', 'card-approved.png');
    expect(decision.status).toBe('approved');
    expect(executed).toEqual(['s1', 's2', 's3']);
    expect(agent.lines).toContain('decision: approved by U0OP1');
    for (const step of ['s1', 's2', 's3']) {
      expect(agent.lines.some((line) => line.includes(`✓ ${step} verified`))).toBe(true);
    }
  }, 180_000);

  it('edit: the operator moves the date, finance adds the refund, the old card is refused, version 3 is approved', async () => {
    const agent = startAgent();
    const runId = await agent.runId;
    // A page opened now and never updated again: it keeps showing version 1's buttons.
    const stale = await openAs('U0OP1', { live: false });
    await waitForText(cardOf(stale, runId), 'version 1');
    const page = await openAs('U0OP1');
    const card = cardOf(page, runId);
    const modal = page.getByRole('dialog');
    await waitForText(card, 'awaiting approval');

    // Dana (operator) edits: a later delivery date. A refund is not offered: operators may not write one.
    await card.getByRole('button', { name: 'Edit', exact: true }).click();
    await waitForText(modal, 'Edit plan v1');
    await modal.getByLabel('New delivery date').fill('2026-04-06');
    const offered = await modal.locator('[data-action-id="add_step"] option').allTextContents();
    expect(offered).toContain('Reschedule delivery');
    expect(offered).not.toContain('Issue refund');
    await shoot(modal, 'edit-modal.png');
    await modal.getByRole('button', { name: 'Save as version 2' }).click();
    await modal.waitFor({ state: 'detached' });
    await waitForText(card, 'version 2');
    await card.getByRole('button', { name: /1 reply/ }).click();
    const thread = page.locator('aside.thread');
    await waitForText(thread, 'New delivery date: Fri 3 Apr 2026 → Mon 6 Apr 2026');

    // Sam (finance) edits version 2 and adds the refund on invoice in_74119.
    await switchTo(page, 'U0FIN1');
    await card.getByRole('button', { name: 'Edit', exact: true }).click();
    await waitForText(modal, 'Edit plan v2');
    await modal.locator('[data-action-id="add_step"]').selectOption('issue_refund');
    await waitForText(modal, 'new step');
    await expect(modal.getByLabel('New delivery date').inputValue()).resolves.toBe('2026-04-06');
    await modal.getByLabel('Invoice').fill('in_74119');
    // Letters in the amount stay as typed and are refused at the field, in words (not "required").
    await modal.getByLabel('Amount (USD)').fill('1.489,00 EUR');
    await modal.getByRole('button', { name: 'Save as version 3' }).click();
    const amountError = modal.locator('[data-block-id="arg:s4:amount"] [role="alert"]');
    await waitForText(amountError, '"1.489,00 EUR" is not an amount (write it like 1489.00)');
    await shoot(modal, 'edit-modal-amount-error.png');
    await modal.getByLabel('Amount (USD)').fill('$1,489.00');
    await modal.getByRole('button', { name: 'Save as version 3' }).click();
    await modal.waitFor({ state: 'detached' });
    await waitForText(card, 'version 3');

    // The diff message: the refund set apart as an added step, with the foreign-account warning.
    const diff = thread.locator('article.message').filter({ hasText: 'Added step s4' });
    await waitForText(diff, 'Added step s4 — Issue refund');
    await waitForText(diff, 'invoice in_74119 belongs to Halvorsen Freight, not Nordvik Logistics');
    await waitForText(diff, 'Re-approval required for');
    await shoot(diff, 'diff-message.png', 'diff-message.png');

    // Dana may not change the refund: the modal refuses it at that step (may_author).
    await switchTo(page, 'U0OP1');
    await card.getByRole('button', { name: 'Edit', exact: true }).click();
    await waitForText(modal, 'Edit plan v3');
    await modal.getByLabel('Amount (USD)').fill('1000.00');
    await modal.getByRole('button', { name: 'Save as version 4' }).click();
    const refusal = modal.locator('[data-block-id^="arg:s4:"] [role="alert"]');
    await waitForText(refusal, 'step s4');
    expect(await refusal.textContent()).toContain('approving one and writing one are separate rights');
    await shoot(modal, 'edit-modal-may-author.png');
    await modal.getByRole('button', { name: 'Cancel' }).click();
    await modal.waitFor({ state: 'detached' });

    // Approve on the old card (version 1, on the page that missed the updates): refused, privately.
    await approveConfirmed(cardOf(stale, runId).getByRole('button', { name: 'Approve', exact: true }));
    await waitForText(page.locator('main article.ephemeral'), 'version 3 is current');
    expect((await demo.countersign.approvals.getRun(runId))?.approvals).toEqual([]);

    // Version 3: Dana approves the operator steps; Fay and Ravi approve the refund (Sam wrote it).
    await approveConfirmed(card.getByRole('button', { name: 'Approve', exact: true }));
    await waitForText(page.locator('main article.ephemeral'), 'is recorded');
    await switchTo(page, 'U0FIN2');
    await approveConfirmed(diff.getByRole('button', { name: 'Approve version 3' }));
    await waitForText(page.locator('main article.ephemeral'), 'is recorded');
    await switchTo(page, 'U0FIN3');
    await approveConfirmed(card.getByRole('button', { name: 'Approve', exact: true }));
    await waitForText(card, 'freight-ops plan, 4 steps — approved');
    // Everyone whose approval counted, not only the last click.
    await waitForText(card, 'Approved by Dana Ortiz, Fay Moreau and Ravi Nair');

    const { decision, executed } = await agent.result;
    expect(decision.status).toBe('approved');
    expect(decision.plan?.steps.map((step) => step.id)).toEqual(['s1', 's2', 's3', 's4']);
    expect(executed).toEqual(['s1', 's2', 's3', 's4']);
    expect(agent.lines.some((line) => line.includes('✓ s4 verified'))).toBe(true);
  }, 240_000);

  it('consistency: moving the delivery warns that the reply still says Friday 3 April; "Edit s3" opens the form there and the fix clears it', async () => {
    const agent = startAgent();
    const runId = await agent.runId;
    const page = await openAs('U0OP1');
    const card = cardOf(page, runId);
    const modal = page.getByRole('dialog');
    await waitForText(card, 'awaiting approval');

    // Dana moves the delivery to Mon 6 Apr in the edit form and saves.
    await card.getByRole('button', { name: 'Edit', exact: true }).click();
    await waitForText(modal, 'Edit plan v1');
    await modal.getByLabel('New delivery date').fill('2026-04-06');
    await modal.getByRole('button', { name: 'Save as version 2' }).click();
    await modal.waitFor({ state: 'detached' });
    await waitForText(card, 'version 2');

    // The card and the diff message say the reply still quotes the old date.
    const warning = 's3 still says "Friday 3 April" (Reply); s2 now says Mon 6 Apr 2026';
    await waitForText(card, warning);
    await card.getByRole('button', { name: /1 reply/ }).click();
    const thread = page.locator('aside.thread');
    const diff = thread.locator('article.message').filter({ hasText: 'Changed step s2' });
    await waitForText(diff, warning);
    await shoot(diff, 'diff-message-consistency.png', 'consistency-warning.png');
    await shoot(card, 'card-consistency.png');

    // One click on "Edit s3": the form for version 2 with the reply first; Dana fixes the date in it.
    await diff.getByRole('button', { name: 'Edit s3', exact: true }).click();
    await waitForText(modal, 'Edit plan v2');
    await waitForText(modal, 'Step s3 is shown first');
    const firstInput = modal.locator('[data-block-id^="arg:"]').first();
    expect(await firstInput.getAttribute('data-block-id')).toBe('arg:s3:ticket_id');
    // The cursor is in the reply, the field that still quotes the old date (focus_on_load).
    const focused =
      "document.activeElement?.closest('[data-block-id]')?.getAttribute('data-block-id') ?? null";
    await expect.poll(() => page.evaluate(focused)).toBe('arg:s3:body');
    const reply = modal.getByLabel('Reply', { exact: true });
    expect(await reply.inputValue()).toContain('Friday 3 April');
    const fixed = (await reply.inputValue()).replace('Friday 3 April', 'Monday 6 April');
    await reply.fill(fixed);
    await shoot(modal, 'edit-modal-at-s3.png');
    await modal.getByRole('button', { name: 'Save as version 3' }).click();
    await modal.waitFor({ state: 'detached' });
    await waitForText(card, 'version 3');
    await expect.poll(async () => (await card.textContent())?.includes('still says')).toBe(false);

    // Approved (the reply is irreversible: confirmed first), the agent sends the corrected reply.
    await approveConfirmed(card.getByRole('button', { name: 'Approve', exact: true }));
    await waitForText(card, 'approved');
    const { decision } = await agent.result;
    expect(decision.status).toBe('approved');
    expect(decision.plan?.steps.find((step) => step.id === 's3')?.args.body).toBe(fixed);
  }, 240_000);
});
