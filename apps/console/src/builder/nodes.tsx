import { Handle, Position, type NodeProps } from '@xyflow/react';
import { memo } from 'react';
import { KINDS, sourceHandles, START_HANDLE, type Definition } from './graph';

export interface StepData extends Record<string, unknown> {
  node: Definition['nodes'][number];
  errors: Array<{ field: string; message: string }>;
  isStart: boolean;
  run?: { status: 'completed' | 'failed' | 'waiting' | 'running'; outcome?: string; at?: string };
}

export interface TriggerData extends Record<string, unknown> {
  trigger: Definition['trigger'];
  webhookUrl: string;
  run?: { status: 'completed' };
}

function summary(node: Definition['nodes'][number]): string {
  switch (node.type) {
    case 'send_template':
      return node.templateName ? `template ${node.templateName}` : 'no template chosen';
    case 'send_session_message':
      return node.text ? `“${String(node.text).slice(0, 40)}”` : 'no text';
    case 'delay':
      return `wait ${node.duration}`;
    case 'wait_for_reply':
      return `up to ${node.timeout}`;
    case 'condition':
      return `${(node.rules ?? []).length} rule(s)`;
    case 'trigger_campaign':
      return `campaign ${node.campaignId || '?'}`;
    case 'http_request':
      return `${node.method} ${String(node.url ?? '').slice(0, 40)}`;
    case 'update_contact':
      return Object.keys(node.fields ?? {}).join(', ') || 'no fields';
    default:
      return '';
  }
}

export const StepNode = memo(function StepNode({ data, selected }: NodeProps & { data: StepData }) {
  const { node, errors, run } = data;
  const kind = KINDS[node.type] ?? { label: node.type, color: '#999' };
  const handles = sourceHandles(node);
  return (
    <div
      className={`step${selected ? ' selected' : ''}${errors.length ? ' invalid' : ''}${run ? ` run-${run.status}` : ''}`}
      style={{ borderTopColor: kind.color }}
      data-testid={`node-${node.id}`}
      data-run-status={run?.status}
    >
      <Handle type="target" position={Position.Left} id="in" />
      <div className="step-head">
        <span className="step-kind" style={{ color: kind.color }}>
          {kind.label}
        </span>
        {data.isStart && <span className="pill">start</span>}
        {errors.length > 0 && (
          <span
            className="error-badge"
            data-testid="error-badge"
            title={errors.map((e) => `${e.field}: ${e.message}`).join('\n')}
          >
            {errors.length}
          </span>
        )}
        {run && (
          <span className={`run-badge ${run.status}`} data-testid="run-badge">
            {run.status}
          </span>
        )}
      </div>
      <div className="step-title">{(node.label as string) || node.id}</div>
      <div className="step-summary">{summary(node)}</div>
      <div className="step-handles">
        {handles.map((h) => (
          <div key={h.id} className={`handle-row ${h.kind}`}>
            <span>{h.label}</span>
            <Handle type="source" position={Position.Right} id={h.id} className={`h-${h.kind}`} data-handle={h.id} />
          </div>
        ))}
      </div>
    </div>
  );
});

export const TriggerNode = memo(function TriggerNode({ data, selected }: NodeProps & { data: TriggerData }) {
  const t = data.trigger;
  return (
    <div
      className={`step trigger${selected ? ' selected' : ''}${data.run ? ' run-completed' : ''}`}
      data-testid="node-trigger"
    >
      <div className="step-head">
        <span className="step-kind">Trigger</span>
      </div>
      <div className="step-title">{t.type === 'webhook' ? 'Webhook' : 'Keyword'}</div>
      <div className="step-summary">
        {t.type === 'keyword' ? (t.keywords ?? []).join(', ') || 'no keywords' : 'POST to the webhook URL'}
      </div>
      <div className="step-handles">
        <div className="handle-row next">
          <span>start</span>
          <Handle type="source" position={Position.Right} id={START_HANDLE} data-handle={START_HANDLE} />
        </div>
      </div>
    </div>
  );
});

export const NODE_TYPES = { step: StepNode, trigger: TriggerNode };
