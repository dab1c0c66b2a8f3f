/**
 * The administration pages in Chromium (issue 24 items 2–4): the side menu opens /system-info, which shows
 * the database and the workers, and a job kind stopped there is stopped for the server; /general-settings
 * changes the project's name, adds a whitelist entry on its IP blocking tab and sets the audit retention,
 * and writes a mail template with its preview, each seen through the API afterwards.
 */
import { describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { getCommand, PASSWORD_PLACEHOLDER } from '@lintel/commands';
import type { TestServer } from '../support/server';
import { admin } from '../support/fixtures';
import { keyboardSignIn } from '../support/console';
import { selfSigned } from '../support/certificates';
import { WAIT, consoleWorld, onPage, waitForPath } from '../support/web';

let server: TestServer;
let browser: Browser;
consoleWorld({}, (w) => ({ server, browser } = w));

describe('administration pages', () => {
  it('/system-info shows the server and stops a job kind; /general-settings saves its tabs', async () => {
    const api = await admin(server);
    await onPage(browser, 'admin-pages', async (page) => {
      await keyboardSignIn(page, server, server.adminLogin, server.adminPassword);
      await page
        .getByTestId('side-menu')
        .getByRole('link', { name: 'System information', exact: true })
        .click();
      await waitForPath(page, '/system-info');
      await page
        .getByTestId('system-database')
        .getByText(/Embedded \(PGlite\)|PostgreSQL server/)
        .waitFor();
      const row = page.getByTestId('worker-row').filter({ hasText: 'job:events.prune' });
      await row.getByRole('button', { name: 'Stop' }).click();
      await page.getByRole('dialog').getByRole('button', { name: 'Stop a worker' }).click();
      await row.getByText('Stopped').waitFor({ timeout: WAIT });
      const listed = await getCommand('worker.list').run({ api }, {});
      expect(listed.data.find((w) => w.name === 'job:events.prune')!.state).toBe('stopped');
      await row.getByRole('button', { name: 'Start' }).click();
      await row.getByText('Running').waitFor({ timeout: WAIT });

      await page
        .getByTestId('side-menu')
        .getByRole('link', { name: 'General settings', exact: true })
        .click();
      await waitForPath(page, '/general-settings');
      await page.getByTestId('field-name').fill('Harbour view');
      await page.getByRole('button', { name: 'Change general settings' }).click();
      await expect
        .poll(async () => (await getCommand('settings.general_get').run({ api }, {})).data.name, {
          timeout: WAIT,
        })
        .toBe('Harbour view');

      await page.getByTestId('settings-tab-ip_blocking').click();
      await page.getByTestId('field-whitelist-ips').fill('10.20.0.0/16');
      await page.getByRole('button', { name: 'Add to the IP whitelist' }).click();
      await page.getByTestId('ip-whitelist').getByText('10.20.0.0/16').waitFor({ timeout: WAIT });
      const white = await getCommand('ip_blocking.whitelist').run({ api }, { service: 'console' });
      expect(white.data).toEqual([
        expect.objectContaining({ start_ip: '10.20.0.0', end_ip: '10.20.255.255' }),
      ]);

      await page.getByTestId('settings-tab-journals').click();
      await page.getByTestId('field-audit-retention').fill('90');
      await page.getByRole('button', { name: 'Change journal retention' }).click();
      await expect
        .poll(async () => (await getCommand('settings.retention_get').run({ api }, {})).data.audit_event, {
          timeout: WAIT,
        })
        .toBe(90);

      await page.getByTestId('settings-tab-mail_templates').click();
      await page.getByTestId('field-template-subject').fill('Welcome to {{project}}');
      await page.getByTestId('field-template-body').fill('Hello {{name}}, open {{link}}');
      await page.getByRole('button', { name: 'Preview a mail template' }).click();
      await page
        .getByTestId('template-preview')
        .getByText('Hello Anna Petrova, open https://lintel.example/link')
        .waitFor({ timeout: WAIT });
      await page.getByRole('button', { name: 'Add a mail template' }).click();
      await page
        .getByTestId('mail-template-row')
        .filter({ hasText: 'Welcome to {{project}}' })
        .waitFor({ timeout: WAIT });
      const templates = await getCommand('mail_template.list').run({ api }, {});
      expect(templates.data).toEqual([
        expect.objectContaining({
          mail_type_id: 'invitation',
          domain_id: null,
          subject: 'Welcome to {{project}}',
        }),
      ]);
    });
  }, 240_000);

  it('/general-settings sets up Apple Wallet: a pasted certificate and key sign passes, and are never shown again', async () => {
    const api = await admin(server);
    const pem = selfSigned('console');
    await onPage(browser, 'admin-wallet', async (page) => {
      await keyboardSignIn(page, server, server.adminLogin, server.adminPassword, `/general-settings`);
      await page.getByTestId('settings-tab-wallet').click();
      await page
        .getByTestId('wallet-state')
        .getByText('Not set up', { exact: false })
        .waitFor({ timeout: WAIT });
      await page.getByTestId('field-wallet-pass_type_id').fill('pass.test.lintel');
      await page.getByTestId('field-wallet-team_id').fill('TEAM123456');
      await page.getByTestId('wallet-certificate').fill(pem.cert);
      await page.getByTestId('wallet-key').fill(pem.key);
      await page.getByRole('button', { name: 'Change the wallet pass settings' }).click();
      await page
        .getByTestId('wallet-state')
        .getByText('Passes are signed', { exact: false })
        .waitFor({ timeout: WAIT });
      // stored: the page and the API show the placeholder, never the key
      expect(await page.getByTestId('wallet-key').inputValue()).toBe(PASSWORD_PLACEHOLDER);
      const stored = await getCommand('settings.wallet_get').run({ api }, {});
      expect(stored).toMatchObject({
        enabled: true,
        data: { team_id: 'TEAM123456', key: PASSWORD_PLACEHOLDER },
      });
      expect(JSON.stringify(stored)).not.toContain('PRIVATE KEY');
      // a field focused and left empty keeps what is stored
      await page.getByTestId('wallet-certificate').focus();
      await page.getByTestId('field-wallet-team_id').focus();
      expect(await page.getByTestId('wallet-certificate').inputValue()).toBe(PASSWORD_PLACEHOLDER);
      await page.getByRole('button', { name: 'Change the wallet pass settings' }).click();
      await page.getByText('Saved', { exact: true }).first().waitFor({ timeout: WAIT });
      expect((await getCommand('settings.wallet_get').run({ api }, {})).enabled).toBe(true);
    });
  }, 240_000);
});
