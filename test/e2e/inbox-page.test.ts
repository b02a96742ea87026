/**
 * The inbox in a real browser: the demo stack (the stand-in's page, the bot over HTTP with real
 * signatures, Redis) and Chromium opening the Countersign Home tab and typing `/countersign`.
 * Screenshots go to test-artifacts/e2e/ (printed at the start); COUNTERSIGN_UPDATE_DOCS=1 also refreshes
 * the README's docs/app-home.png.
 */
import { copyFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Browser, Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it, onTestFailed } from 'vitest';
import { freightContext, freightSteps, freightSummary } from '../../examples/freight/plans.ts';
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
  demo = await startDemo({ redisUrl: redisUrl(), ackTimeoutMs: 15_000 });
}, 120_000);

afterAll(async () => {
  await (await browser?.catch(() => undefined))?.close();
  await demo?.stop();
}, 60_000);

async function openAs(user: string): Promise<Page> {
  browser ??= launchChromium();
  const context = await (await browser).newContext({
    viewport: { width: 1200, height: 1100 },
    deviceScaleFactor: 1,
    timezoneId: 'UTC',
  });
  const page = await context.newPage();
  page.setDefaultTimeout(30_000);
  const problems: string[] = [];
  page.on('pageerror', (error) => problems.push(error.message));
  onTestFailed(async () => {
    const name = `failure-inbox-${user}.png`;
    await page.screenshot({ path: join(ARTIFACTS, name), fullPage: true });
    console.log(`page as ${user} (${name}):\n${await pageText(page)}\nerrors: ${problems.join('; ')}`);
  });
  await page.goto(`${demo.pageUrl}?as=${user}`);
  await page.locator(`[data-viewer="${user}"]`).waitFor({ state: 'attached' });
  return page;
}

async function shoot(target: Locator | Page, name: string, docsName?: string): Promise<void> {
  const page = 'page' in target ? target.page() : target;
  await page.mouse.move(0, 0);
  const path = join(ARTIFACTS, name);
  await target.screenshot({ path });
  if (UPDATE_DOCS && docsName !== undefined) copyFileSync(path, resolve('docs', docsName));
}

const submitFreight = () =>
  demo.agent.submit({
    summary: freightSummary,
    context: freightContext,
    steps: freightSteps.map((step) => ({ ...step, args: { ...step.args } })),
    expiresIn: '2h',
  });

describe('the inbox on the demo page in Chromium', () => {
  it('the Home tab lists the plan waiting for the operator; its link opens the card', async () => {
    const { runId } = await submitFreight();
    const page = await openAs('U0OP1');
    const channel = page.locator('main#channel');
    await waitForText(channel.locator('article.message').filter({ hasText: runId }), 'awaiting approval');

    await page.getByRole('button', { name: /\(Home\)/ }).click();
    await waitForText(channel, 'Waiting for you');
    const entry = channel
      .locator('.link.permalink')
      .filter({ hasText: freightSummary.slice(0, 30) })
      .first();
    await entry.waitFor({ state: 'visible' });
    await waitForText(channel, runId);
    await waitForText(channel, 'Your approval is needed for');
    await waitForText(channel, 'Escalated to you');
    await waitForText(channel, 'Recently decided');
    await shoot(page, 'app-home.png', 'app-home.png');

    await entry.click();
    const card = channel.locator('article.message').filter({ hasText: runId });
    await waitForText(card, 'awaiting approval');
    await page.locator('#composer').waitFor({ state: 'visible' });
    await page.context().close();
  }, 120_000);

  it('typing /countersign pending answers only the person who typed it; an unknown subcommand answers the help', async () => {
    const { runId } = await submitFreight();
    const page = await openAs('U0OP1');
    const channel = page.locator('main#channel');
    await waitForText(channel.locator('article.message').filter({ hasText: runId }), 'awaiting approval');

    await page.getByLabel('Message').fill('/countersign pending');
    await page.getByLabel('Message').press('Enter');
    const answer = channel.locator('.message.ephemeral').filter({ hasText: 'Waiting for you' }).last();
    await waitForText(answer, runId);
    await waitForText(answer, 'Only visible to you');
    await expect.poll(() => page.getByLabel('Message').inputValue()).toBe('');
    await shoot(answer, 'slash-command-pending.png');

    await page.getByLabel('Message').fill('/countersign approve all');
    await page.getByLabel('Message').press('Enter');
    const help = channel
      .locator('.message.ephemeral')
      .filter({ hasText: "I don't know “approve all”" })
      .last();
    await waitForText(help, '/countersign show <run id>');
    await shoot(help, 'slash-command-help.png');

    // Someone else does not see Dana's answers.
    const other = await openAs('U0FIN1');
    await waitForText(
      other.locator('main#channel').locator('article.message').filter({ hasText: runId }),
      'awaiting',
    );
    expect(await other.locator('main#channel').textContent()).not.toContain('Waiting for you (');
    await other.context().close();
    await page.context().close();
  }, 120_000);
});
