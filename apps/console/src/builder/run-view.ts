import { edgesOf, TRIGGER_ID, type Definition } from './graph';

export interface RunEntry {
  seq: number;
  nodeId: string;
  type: string;
  outcome: string;
  at?: string;
  detail?: { input?: any; output?: any; error?: any; reply?: any };
}

export interface RunData {
  runId: string;
  workflowVersion: number;
  status: string;
  currentNodeId: string | null;
  waitingFor: { kind: string; nodeId: string; until?: string; effect?: string } | null;
  error: { message: string; nodeId?: string } | null;
  history: RunEntry[];
  createdAt: string;
  finishedAt: string | null;
  contact: { phone?: string };
  payload: unknown;
}

export type NodeRunStatus = { status: 'completed' | 'failed' | 'waiting' | 'running'; outcome?: string; at?: string };

/** Each node's status in a run: the last thing that happened to it, or what the run waits on there. */
export function nodeStatuses(run: RunData): Record<string, NodeRunStatus> {
  const out: Record<string, NodeRunStatus> = {};
  for (const entry of run.history)
    out[entry.nodeId] = {
      status: entry.outcome === 'failed' ? 'failed' : 'completed',
      outcome: entry.outcome,
      at: entry.at,
    };
  if (run.waitingFor && (run.status === 'waiting' || run.status === 'running'))
    out[run.waitingFor.nodeId] = {
      status: run.status === 'running' ? 'running' : 'waiting',
      outcome: run.waitingFor.kind,
    };
  if (run.status === 'failed' && run.currentNodeId && !out[run.currentNodeId])
    out[run.currentNodeId] = { status: 'failed' };
  return out;
}

/** The edges the run went along: trigger → first step, then each step to the next one. */
export function pathEdges(definition: Definition, run: RunData): Set<string> {
  const edges = edgesOf(definition);
  const taken = new Set<string>();
  const steps = run.history.map((h) => h.nodeId);
  if (run.waitingFor && steps[steps.length - 1] !== run.waitingFor.nodeId) steps.push(run.waitingFor.nodeId);
  if (steps.length) steps.unshift(TRIGGER_ID);
  for (let i = 1; i < steps.length; i++) {
    const edge = edges.find((e) => e.source === steps[i - 1] && e.target === steps[i]);
    if (edge) taken.add(edge.id);
  }
  return taken;
}

/** Milliseconds from the previous step (or the run's start) to this entry. */
export function durations(run: RunData): number[] {
  let previous = Date.parse(run.createdAt);
  return run.history.map((h) => {
    const at = h.at ? Date.parse(h.at) : NaN;
    const d = Number.isFinite(at) && Number.isFinite(previous) ? Math.max(0, at - previous) : NaN;
    if (Number.isFinite(at)) previous = at;
    return d;
  });
}
