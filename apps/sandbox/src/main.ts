/** Runs the sandbox as its own process: SANDBOX_PORT, SANDBOX_HOST, SANDBOX_WEBHOOK_URL, WHATSAPP_APP_SECRET. */
import { createSandbox } from './sandbox';

async function main(): Promise<void> {
  const port = Number(process.env.SANDBOX_PORT ?? 3100);
  const host = process.env.SANDBOX_HOST ?? '127.0.0.1';
  const sandbox = createSandbox({
    webhookUrl: process.env.SANDBOX_WEBHOOK_URL ?? 'http://127.0.0.1:3000/webhooks/whatsapp',
    appSecret: process.env.WHATSAPP_APP_SECRET ?? 'sandbox-app-secret',
  });
  const url = await sandbox.listen(port, host);
  console.log(`[sandbox] WhatsApp Cloud API sandbox on ${url} (Graph: ${url}/v21.0/..., control: ${url}/_sandbox/...)`);
  console.log(`[sandbox] webhooks -> ${sandbox.state.config.webhookUrl}`);
  const stop = async () => {
    await sandbox.close();
    process.exit(0);
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
