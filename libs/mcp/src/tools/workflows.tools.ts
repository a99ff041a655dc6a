import { z } from 'zod';
import type { McpServices } from '../mcp-services';
import { defineTool, ToolError, type ToolDefinition } from '../tool-kit';

export function workflowTools(s: McpServices): ToolDefinition[] {
  return [
    defineTool({
      name: 'list_workflows',
      title: 'List active workflows',
      description: 'The active automation workflows of the account (id, name). Start one with start_workflow.',
      grant: '/workflows',
      input: z.object({}),
      annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
      async run(_args, client) {
        const workflows = await s.workflows.listActive(client.accountId);
        return {
          data: { workflows },
          text: `${workflows.length} active workflow(s)${workflows.length ? `: ${workflows.map((w) => `${w.name} (id ${w.id})`).join('; ')}` : ''}`,
        };
      },
    }),
    defineTool({
      name: 'start_workflow',
      title: 'Start a workflow run',
      description:
        "Starts a run of an active workflow, exactly as a POST to its inbound webhook would: `payload` is the run's input, which the workflow's " +
        'steps read as {{payload.…}} (e.g. {"phone": "+4915112345678", "order": {"id": "1234"}}; `phone` names the contact). Returns the run id ' +
        '(see get_workflow_run). With an idempotency_key a retry returns the same run instead of starting another.',
      grant: '/workflows',
      input: z.object({
        workflow_id: z.number().int().describe('id of an active workflow (list_workflows)'),
        payload: z
          .record(z.string(), z.unknown())
          .optional()
          .describe('the JSON object passed to the workflow (default {})'),
        idempotency_key: z
          .string()
          .regex(/^[\x21-\x7e]{1,200}$/, 'idempotency_key must be 1 to 200 visible ASCII characters')
          .optional()
          .describe('a unique string for this start'),
      }),
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
      async run({ workflow_id, payload = {}, idempotency_key }, client) {
        const workflow = await s.workflows.get(client.accountId, String(workflow_id));
        const limit = s.config.WORKFLOW_WEBHOOK_MAX_BODY_BYTES;
        if (Buffer.byteLength(JSON.stringify(payload)) > limit)
          throw new ToolError(`payload is too large (limit ${limit} bytes)`);
        if (!workflow.isActive) throw new ToolError(`Workflow ${workflow_id} is not active: it cannot be started`);
        if (workflow.currentVersion === 0)
          throw new ToolError(`Workflow ${workflow_id} is not published yet: publish its draft before starting it`);
        // the webhook's backpressure: accepted runs must start promptly, an agent's as a shop's
        const refusal = await s.backlog.refusal();
        if (refusal)
          throw new ToolError(refusal.message, { status: 429, retryAfterSeconds: refusal.retryAfterSeconds });
        const started = await s.runs.startFromWebhook(workflow.identifier, payload, idempotency_key ?? null);
        if (!started) throw new ToolError('Workflow ID not found'); // deactivated meanwhile: the webhook's answer
        return {
          data: { runId: started.runId, workflowId: workflow_id, created: started.created },
          text: started.created
            ? `Workflow ${workflow.name} started: run ${started.runId}`
            : `Idempotency key already used: the existing run is ${started.runId}`,
        };
      },
    }),
    defineTool({
      name: 'get_workflow_run',
      title: 'Get a workflow run',
      description:
        'A workflow run: status (pending, running, waiting, completed, failed), the current step, what it waits for (a reply, a timer), its history and error.',
      grant: '/workflows',
      input: z.object({ run_id: z.string().describe('the run id returned by start_workflow') }),
      annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
      async run({ run_id }, client) {
        const run = await s.runs.getRun(client.accountId, run_id);
        return {
          data: { run },
          text: `Run ${run.runId}: ${run.status}${run.currentNodeId ? ` at step ${run.currentNodeId}` : ''}${run.waitingFor ? `, waiting for ${run.waitingFor.kind}` : ''}${run.error ? `, error: ${JSON.stringify(run.error)}` : ''}`,
        };
      },
    }),
  ];
}
