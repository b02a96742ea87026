/**
 * A real browser for the e2e tests: Debian's Chromium driven by playwright-core (which downloads no
 * browser). Missing Chromium is a failure with the install command, never a skip: CI installs it.
 */
import { existsSync, mkdirSync } from 'node:fs';
import { resolve } from 'node:path';
import { type Browser, chromium, type Locator, type Page } from 'playwright-core';

/** Where Chromium is expected (`CHROMIUM_PATH` overrides it). */
export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** Launches headless Chromium, or fails saying how to install it. */
export async function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM_PATH)) {
    throw new Error(
      `The browser tests need Chromium at ${CHROMIUM_PATH}, and it is not there.\n` +
        'Install it with `apt-get update && apt-get install -y chromium` (Debian/Ubuntu; .ci/run does this),\n' +
        'or set CHROMIUM_PATH to a Chromium or Chrome binary.',
    );
  }
  return chromium.launch({
    executablePath: CHROMIUM_PATH,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
    timeout: 60_000,
  });
}

/** `test-artifacts/<name>/` (gitignored), created. */
export function artifactsDir(name: string): string {
  const dir = resolve('test-artifacts', name);
  mkdirSync(dir, { recursive: true });
  return dir;
}

/** Waits until `locator` contains `text` (Playwright's own waiting, without @playwright/test). */
export async function waitForText(locator: Locator, text: string | RegExp, timeout = 20_000): Promise<void> {
  await locator.filter({ hasText: text }).first().waitFor({ state: 'visible', timeout });
}

/** The page's text, for failure messages. */
export async function pageText(page: Page): Promise<string> {
  return ((await page.locator('body').textContent()) ?? '').slice(0, 4_000);
}
