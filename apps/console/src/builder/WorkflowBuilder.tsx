import { validateDefinition, type NodeType } from '@switchboard/engine';
import {
  Background,
  Controls,
  MarkerType,
  MiniMap,
  ReactFlow,
  ReactFlowProvider,
  useReactFlow,
  useUpdateNodeInternals,
  type Connection,
  type Edge as FlowEdge,
  type EdgeChange,
  type Node as FlowNode,
  type NodeChange,
} from '@xyflow/react';
import '@xyflow/react/dist/style.css';
import { useCallback, useEffect, useMemo, useRef, useState, type DragEvent } from 'react';
import { ApiError, templatesApi, workflowsApi, type Me, type TemplateInfo, type WorkflowDetail } from '../api';
import { navigate } from '../router';
import { autoLayout } from './auto-layout';
import { NodeForm, TriggerForm } from './forms';
import {
  addNode,
  connect,
  disconnect,
  edgesOf,
  KINDS,
  sourceHandles,
  moveNode,
  PALETTE,
  removeNodes,
  renameNode,
  TRIGGER_ID,
  unplaced,
  updateNode,
  type Definition,
  type Model,
} from './graph';
import { commit, commitGesture, createHistory, redo, replace, undo, type History } from './history';
import { NODE_TYPES } from './nodes';
import { RunPanel } from './RunPanel';
import { nodeStatuses, pathEdges, type RunData } from './run-view';

type Mode =
  | { kind: 'edit' }
  | { kind: 'version'; version: number; model: Model }
  | { kind: 'run'; runId: string; model: Model; run: RunData | null };
type SaveState = 'saved' | 'dirty' | 'saving' | 'conflict' | 'error';
type Notice = { kind: 'error' | 'info'; text: string; testId?: string };
type Side = 'node' | 'versions' | 'runs';

const NODE_DRAG_TYPE = 'application/x-switchboard-node';

function modelOf(definition: Definition, layout: Model['layout'] | null): Model {
  return {
    definition: { trigger: definition.trigger, startNodeId: definition.startNodeId, nodes: definition.nodes },
    layout: layout ?? { nodes: {} },
  };
}

async function placed(model: Model): Promise<Model> {
  return unplaced(model).length ? autoLayout(model) : model;
}

export default function WorkflowBuilder(props: { workflowId: number; me: Me }) {
  return (
    <ReactFlowProvider>
      <Builder {...props} />
    </ReactFlowProvider>
  );
}

function Builder({ workflowId, me }: { workflowId: number; me: Me }) {
  const flow = useReactFlow();
  const [workflow, setWorkflow] = useState<WorkflowDetail | null>(null);
  const [loadError, setLoadError] = useState('');
  const [history, setHistory] = useState<History<Model> | null>(null);
  const [mode, setMode] = useState<Mode>({ kind: 'edit' });
  const [saveState, setSaveState] = useState<SaveState>('saved');
  const [notice, setNotice] = useState<Notice | null>(null);
  const [selected, setSelected] = useState<string | null>(null);
  const [selectedEdges, setSelectedEdges] = useState<Set<string>>(new Set());
  // Sizes React Flow measured, by node id. Kept in a ref written synchronously from onNodesChange: React Flow drops a
  // node's handle positions when it is handed a node object without `measured` (after which that node's edges vanish
  // and its handles stop connecting), so every node object built must carry the latest size. The state only
  // triggers the re-render.
  const measuredRef = useRef<Record<string, { width: number; height: number }>>({});
  const [dims, setDims] = useState(measuredRef.current);
  const [templates, setTemplates] = useState<TemplateInfo[] | null>(null);
  const [side, setSide] = useState<Side>('node');
  const [hasDraft, setHasDraft] = useState(false);

  const revision = useRef(0);
  const saved = useRef<Model | null>(null);
  const saving = useRef<Promise<void> | null>(null);
  const dragOrigin = useRef<Model | null>(null);
  // 'conflict' sticks until the draft is reloaded (or a version restored): no save may overwrite the other tab's draft
  const saveStateRef = useRef<SaveState>('saved');
  const conflictNotice = useRef<Notice | null>(null);

  // Load: the draft when there is one, else the published version (the first save creates the draft).
  const load = useCallback(async () => {
    setLoadError('');
    try {
      const [wf, draft] = await Promise.all([workflowsApi.get(workflowId), workflowsApi.draft(workflowId)]);
      const empty: Definition = { trigger: { type: 'webhook' }, startNodeId: '', nodes: [] };
      const model = await placed(
        draft
          ? modelOf(draft.definition as Definition, draft.layout)
          : modelOf(wf.version > 0 ? (wf as unknown as Definition) : empty, wf.layout),
      );
      revision.current = draft?.revision ?? 0;
      saved.current = model;
      setHasDraft(!!draft);
      setWorkflow(wf);
      setHistory(createHistory(model));
      saveStateRef.current = 'saved';
      setSaveState('saved');
      setMode({ kind: 'edit' });
      setNotice(null);
    } catch (e) {
      setLoadError((e as Error).message);
    }
  }, [workflowId]);
  useEffect(() => {
    void load();
    templatesApi.approved().then(setTemplates, () => setTemplates([]));
  }, [load]);

  const editing = mode.kind === 'edit';
  const model = mode.kind === 'edit' ? history?.present : mode.model;

  // Live validation: the engine's own validateDefinition, the code the server runs.
  const validation = useMemo(() => (model ? validateDefinition(model.definition) : null), [model?.definition]);
  const errors = validation && !validation.ok ? validation.errors : [];
  const errorsByNode = useMemo(() => {
    const by: Record<string, Array<{ field: string; message: string }>> = {};
    for (const e of errors) {
      const id = e.nodeId ?? (e.field.startsWith('trigger') ? TRIGGER_ID : '');
      if (id) (by[id] ??= []).push({ field: e.field, message: e.message });
    }
    return by;
  }, [errors]);
  const generalErrors = errors.filter((e) => !e.nodeId && !e.field.startsWith('trigger'));

  // ---- editing (each change is one undo step) ----
  const apply = useCallback((change: (m: Model) => Model, coalesce?: string) => {
    setHistory((h) => (h ? commit(h, change(h.present), coalesce) : h));
  }, []);

  // ---- autosave with optimistic concurrency ----
  const save = useCallback(async () => {
    if (saving.current) return saving.current;
    const run = (async () => {
      let current = historyRef.current?.present;
      while (current && current !== saved.current && saveStateRef.current !== 'conflict') {
        setSaveState('saving');
        try {
          const draft = await workflowsApi.saveDraft(workflowId, {
            revision: revision.current,
            name: workflowRef.current?.name ?? '',
            definition: current.definition,
            layout: current.layout,
          });
          revision.current = draft.revision;
          saved.current = current;
          setHasDraft(true);
        } catch (e) {
          if (e instanceof ApiError && e.status === 409) {
            saveStateRef.current = 'conflict';
            setSaveState('conflict');
            conflictNotice.current = {
              kind: 'error',
              testId: 'conflict',
              text: `${e.message}. Another tab or person saved this draft; reload to continue from their version.`,
            };
            setNotice(conflictNotice.current);
          } else {
            setSaveState('error');
            setNotice({ kind: 'error', text: `Not saved: ${(e as Error).message}` });
          }
          return;
        }
        current = historyRef.current?.present;
      }
      if (saveStateRef.current !== 'conflict') setSaveState('saved');
    })();
    saving.current = run;
    try {
      await run;
    } finally {
      saving.current = null;
    }
  }, [workflowId]);

  const historyRef = useRef(history);
  historyRef.current = history;
  const workflowRef = useRef(workflow);
  workflowRef.current = workflow;
  if (saveState === 'conflict') saveStateRef.current = 'conflict';
  else if (saveStateRef.current !== 'conflict') saveStateRef.current = saveState;

  useEffect(() => {
    if (!history || saveStateRef.current === 'conflict' || dragOrigin.current) return;
    if (history.present === saved.current) {
      // e.g. undone back to what is saved
      if (!saving.current) setSaveState('saved');
      return;
    }
    setSaveState('dirty');
    const timer = setTimeout(() => void save(), 400);
    return () => clearTimeout(timer);
  }, [history, save]); // the whole history: a drag's end adds an undo step without changing the present

  // ---- undo / redo ----
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if (!(e.ctrlKey || e.metaKey) || mode.kind !== 'edit') return;
      const target = e.target as HTMLElement;
      if (target.closest('input, textarea, select')) return; // the field's own text undo
      const key = e.key.toLowerCase();
      if (key === 'z' && !e.shiftKey) (e.preventDefault(), setHistory((h) => (h ? undo(h) : h)));
      else if ((key === 'z' && e.shiftKey) || key === 'y') (e.preventDefault(), setHistory((h) => (h ? redo(h) : h)));
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, [mode.kind]);

  // ---- the canvas, derived from the model ----
  const run = mode.kind === 'run' ? mode.run : null;
  const statuses = useMemo(() => (run ? nodeStatuses(run) : null), [run]);
  const taken = useMemo(() => (run && model ? pathEdges(model.definition, run) : null), [run, model]);

  const nodes: FlowNode[] = useMemo(() => {
    if (!model || !workflow) return [];
    const d = model.definition;
    return [
      {
        id: TRIGGER_ID,
        type: 'trigger',
        position: model.layout.trigger ?? { x: -300, y: 0 },
        data: {
          trigger: d.trigger,
          webhookUrl: workflow.webhookUrl,
          run: run && run.history.length ? { status: 'completed' } : undefined,
        },
        deletable: false,
        selected: selected === TRIGGER_ID,
        measured: measuredRef.current[TRIGGER_ID],
      },
      ...d.nodes.map((n) => ({
        id: n.id,
        type: 'step',
        position: model.layout.nodes[n.id] ?? { x: 0, y: 0 },
        data: { node: n, errors: errorsByNode[n.id] ?? [], isStart: d.startNodeId === n.id, run: statuses?.[n.id] },
        selected: selected === n.id,
        draggable: editing,
        measured: measuredRef.current[n.id],
      })),
    ];
  }, [model, workflow, errorsByNode, selected, dims, statuses, editing, run]);

  const edges: FlowEdge[] = useMemo(() => {
    if (!model) return [];
    return edgesOf(model.definition).map((e) => ({
      id: e.id,
      source: e.source,
      sourceHandle: e.sourceHandle,
      target: e.target,
      targetHandle: 'in',
      label: e.label,
      className: `edge-${e.kind}${taken?.has(e.id) ? ' taken' : ''}`,
      animated: taken?.has(e.id) ?? false,
      selected: selectedEdges.has(e.id),
      markerEnd: { type: MarkerType.ArrowClosed },
    }));
  }, [model, taken, selectedEdges]);

  // New steps and steps whose handles changed (a branch or rule added or removed) get their handle positions
  // measured again, as React Flow asks for dynamic handles; without it an edge may have nowhere to attach.
  const updateNodeInternals = useUpdateNodeInternals();
  const handleSignatures = useRef(new Map<string, string>());
  useEffect(() => {
    if (!model) return;
    const changed: string[] = [];
    for (const n of model.definition.nodes) {
      const signature = sourceHandles(n)
        .map((h) => h.id)
        .join(',');
      if (handleSignatures.current.get(n.id) !== signature) changed.push(n.id);
      handleSignatures.current.set(n.id, signature);
    }
    if (changed.length === 0) return;
    requestAnimationFrame(() => updateNodeInternals(changed));
  }, [model?.definition.nodes, updateNodeInternals]);

  const onNodesChange = useCallback(
    (changes: NodeChange[]) => {
      const measured: Record<string, { width: number; height: number }> = {};
      for (const c of changes) {
        if (c.type === 'dimensions' && c.dimensions) measured[c.id] = c.dimensions;
        else if (c.type === 'select') setSelected((s) => (c.selected ? c.id : s === c.id ? null : s));
        else if (c.type === 'position' && c.position && mode.kind === 'edit') {
          const { id, position } = c;
          setHistory((h) => (h ? replace(h, moveNode(h.present, id, position)) : h));
        }
      }
      if (Object.keys(measured).length) {
        measuredRef.current = { ...measuredRef.current, ...measured };
        setDims(measuredRef.current);
      }
    },
    [mode.kind],
  );
  const onEdgesChange = useCallback((changes: EdgeChange[]) => {
    for (const c of changes)
      if (c.type === 'select')
        setSelectedEdges((s) => {
          const next = new Set(s);
          if (c.selected) next.add(c.id);
          else next.delete(c.id);
          return next;
        });
  }, []);
  const onConnect = useCallback(
    (c: Connection) => c.source && c.target && apply((m) => connect(m, c.source, c.sourceHandle ?? 'next', c.target)),
    [apply],
  );
  const onDelete = useCallback(
    ({ nodes: gone, edges: cut }: { nodes: FlowNode[]; edges: FlowEdge[] }) => {
      if (mode.kind !== 'edit') return;
      const goneIds = new Set(gone.map((n) => n.id));
      apply((m) => {
        let next = removeNodes(m, [...goneIds]);
        for (const e of cut)
          if (!goneIds.has(e.source) && !goneIds.has(e.target))
            next = disconnect(next, e.source, e.sourceHandle ?? 'next');
        return next;
      });
      setSelected(null);
      setSelectedEdges(new Set());
    },
    [apply, mode.kind],
  );

  const addAt = useCallback((type: NodeType, position: { x: number; y: number }) => {
    let created = '';
    setHistory((h) => {
      if (!h) return h;
      const { model: next, id } = addNode(h.present, type, position);
      created = id;
      return commit(h, next);
    });
    setTimeout(() => created && (setSelected(created), setSide('node')));
  }, []);
  const onDrop = useCallback(
    (e: DragEvent) => {
      e.preventDefault();
      const type = e.dataTransfer.getData(NODE_DRAG_TYPE) as NodeType;
      if (!type || !KINDS[type] || mode.kind !== 'edit') return;
      addAt(type, flow.screenToFlowPosition({ x: e.clientX, y: e.clientY }));
    },
    [flow, addAt, mode.kind],
  );

  // ---- publish, discard, versions, runs ----
  async function publish() {
    setNotice(null);
    await save();
    if (saveStateRef.current === 'conflict') return setNotice(conflictNotice.current);
    if (errors.length) {
      const e = errors[0];
      setNotice({
        kind: 'error',
        testId: 'publish-error',
        text: `Cannot publish: ${e.nodeId !== undefined ? `node "${e.nodeId}": ` : ''}${e.field}: ${e.message}${errors.length > 1 ? ` (and ${errors.length - 1} more)` : ''}`,
      });
      return;
    }
    if (revision.current === 0)
      return setNotice({ kind: 'info', text: 'Nothing to publish: no changes since the current version.' });
    try {
      const result = await workflowsApi.publish(workflowId, revision.current).catch((e) => {
        // a version published since this draft was started (through the API): replace it only when asked to
        const since = e instanceof ApiError && e.status === 409 ? e.body?.currentVersion : undefined;
        if (typeof since !== 'number') throw e;
        const replace = window.confirm(
          `Version ${since} was published after you started this draft from version ${e.body.baseVersion}` +
            ` (through the API, or by someone else). Publishing replaces it with your draft: its changes are lost.` +
            ` Publish anyway?`,
        );
        if (!replace) throw new Error(`version ${since} was published since; open Versions to compare`);
        return workflowsApi.publish(workflowId, revision.current, since);
      });
      revision.current = 0;
      setHasDraft(false);
      setWorkflow(await workflowsApi.get(workflowId));
      setNotice({ kind: 'info', testId: 'published', text: `Published version ${result.version}.` });
    } catch (e) {
      setNotice({ kind: 'error', testId: 'publish-error', text: `Cannot publish: ${(e as Error).message}` });
    }
  }

  /** What a failed action says, instead of nothing happening. */
  const failed = (action: string) => (e: unknown) =>
    setNotice({ kind: 'error', testId: 'action-error', text: `${action}: ${(e as Error).message}` });

  async function discard() {
    if (!window.confirm('Discard the draft and go back to the published version?')) return;
    try {
      await workflowsApi.discardDraft(workflowId);
    } catch (e) {
      if (!(e instanceof ApiError && e.status === 404)) return failed('Cannot discard the draft')(e); // 404: none left
    }
    await load();
  }

  async function viewVersion(version: number) {
    try {
      const v = await workflowsApi.version(workflowId, version);
      setMode({ kind: 'version', version, model: await placed(modelOf(v.definition as Definition, v.layout)) });
      setSelected(null);
    } catch (e) {
      failed(`Cannot open version ${version}`)(e);
    }
  }

  async function restoreVersion(version: number) {
    await save();
    const draft = await workflowsApi.restore(workflowId, version).catch(failed(`Cannot restore version ${version}`));
    if (!draft) return;
    const restored = await placed(modelOf(draft.definition as Definition, draft.layout));
    revision.current = draft.revision;
    saved.current = restored;
    saveStateRef.current = 'saved';
    setSaveState('saved');
    setHistory(createHistory(restored));
    setHasDraft(true);
    setMode({ kind: 'edit' });
    setNotice({
      kind: 'info',
      text: `Version ${version} restored as the draft (revision ${draft.revision}); publish to make it current.`,
    });
  }

  const openRun = useCallback(
    async (runId: string) => {
      const data = (await workflowsApi.run(runId).catch(failed('Cannot open the run'))) as RunData | undefined;
      if (!data) return;
      const wf = workflowRef.current;
      let runModel: Model;
      if (wf && data.workflowVersion === wf.version)
        runModel = await placed(modelOf(wf as unknown as Definition, wf.layout));
      else {
        const v = await workflowsApi.version(workflowId, data.workflowVersion).catch(failed('Cannot open the run'));
        if (!v) return;
        runModel = await placed(modelOf(v.definition as Definition, v.layout));
      }
      setSelected(null);
      setMode({ kind: 'run', runId, model: runModel, run: data });
      setSide('runs');
    },
    [workflowId],
  );

  // Live updates of the run shown (Server-Sent Events).
  const watchedRun = mode.kind === 'run' ? mode.runId : null;
  useEffect(() => {
    if (!watchedRun) return;
    const source = new EventSource(`/v1/workflow-runs/${watchedRun}/events`);
    source.addEventListener('run', (event) => {
      const data = JSON.parse((event as MessageEvent).data) as RunData;
      setMode((m) => (m.kind === 'run' && m.runId === data.runId ? { ...m, run: data } : m));
    });
    return () => source.close();
  }, [watchedRun]);

  // Large graphs open on their beginning (the trigger at the top left) at a readable zoom instead of fitting all:
  // with onlyRenderVisibleElements only what is on screen renders, which keeps a 300-step workflow quick to open.
  const large = (model?.definition.nodes.length ?? 0) > 150;
  const startViewport = useMemo(() => {
    const at = model?.layout.trigger ?? { x: 0, y: 0 };
    return { x: 40 - at.x * 0.8, y: 40 - at.y * 0.8, zoom: 0.8 };
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [workflowId, mode.kind, !!model]);

  if (loadError) return <div className="page error">{loadError}</div>;
  if (!history || !workflow || !model) return <div className="loading">Loading the workflow…</div>;

  const selectedNode =
    selected && selected !== TRIGGER_ID ? model.definition.nodes.find((n) => n.id === selected) : undefined;

  return (
    <div className="builder" data-testid="builder">
      <header className="builder-bar">
        <a href="/app/workflows" onClick={(e) => (e.preventDefault(), navigate('/workflows'))}>
          ← Workflows
        </a>
        <h1>{workflow.name}</h1>
        <span className="pill" data-testid="live-version">
          {workflow.version > 0 ? `live v${workflow.version}` : 'not published'}
        </span>
        {editing && (
          <span className={`save-state ${saveState}`} data-testid="save-state">
            {hasDraft || saveState !== 'saved'
              ? {
                  saved: 'Draft saved',
                  dirty: 'Unsaved changes',
                  saving: 'Saving…',
                  conflict: 'Conflict',
                  error: 'Not saved',
                }[saveState]
              : 'No draft'}
          </span>
        )}
        <div className="spacer" />
        {editing && (
          <>
            <button onClick={() => setHistory((h) => (h ? undo(h) : h))} disabled={!history.past.length} title="Ctrl+Z">
              Undo
            </button>
            <button
              onClick={() => setHistory((h) => (h ? redo(h) : h))}
              disabled={!history.future.length}
              title="Ctrl+Shift+Z"
            >
              Redo
            </button>
            <button onClick={discard} disabled={!hasDraft}>
              Discard draft
            </button>
            <button className="primary" onClick={publish} data-testid="publish">
              Publish
            </button>
          </>
        )}
        {mode.kind === 'version' && (
          <>
            <span className="pill" data-testid="read-only">
              Viewing version {mode.version} (read-only)
            </span>
            <button onClick={() => restoreVersion(mode.version)}>Restore as draft</button>
            <button onClick={() => setMode({ kind: 'edit' })}>Back to the draft</button>
          </>
        )}
        {mode.kind === 'run' && (
          <>
            <span className="pill" data-testid="run-mode">
              Run {mode.runId.slice(0, 8)} · v{mode.run?.workflowVersion}
            </span>
            <button onClick={() => setMode({ kind: 'edit' })}>Back to editing</button>
          </>
        )}
      </header>
      {notice && (
        <div className={`notice ${notice.kind}`} data-testid={notice.testId} role="status">
          {notice.text}
          {notice.testId === 'conflict' && <button onClick={() => void load()}>Reload</button>}
          <button className="link" onClick={() => setNotice(null)}>
            ×
          </button>
        </div>
      )}
      {editing && generalErrors.length > 0 && (
        <div className="notice error" data-testid="general-errors">
          {generalErrors.map((e) => `${e.field}: ${e.message}`).join(' · ')}
        </div>
      )}
      <div className={`builder-body${editing ? '' : ' no-palette'}`}>
        {editing && (
          <aside className="palette" data-testid="palette">
            <h3>Steps</h3>
            {PALETTE.map((type) => (
              <div
                key={type}
                className="palette-item"
                draggable
                data-kind={type}
                style={{ borderLeftColor: KINDS[type].color }}
                onDragStart={(e) => {
                  e.dataTransfer.setData(NODE_DRAG_TYPE, type);
                  e.dataTransfer.effectAllowed = 'move';
                }}
                onDoubleClick={() => {
                  const center = flow.screenToFlowPosition({ x: window.innerWidth / 2, y: window.innerHeight / 2 });
                  addAt(type, center);
                }}
                title="Drag onto the canvas (or double-click)"
              >
                {KINDS[type].label}
              </div>
            ))}
            <p className="hint">
              Drag a step onto the canvas, then drag from a handle on its right to the next step. Delete: select and
              press Delete. Undo: Ctrl+Z.
            </p>
          </aside>
        )}
        <div
          className="canvas"
          onDrop={onDrop}
          onDragOver={(e) => (e.preventDefault(), (e.dataTransfer.dropEffect = 'move'))}
        >
          <ReactFlow
            key={
              mode.kind === 'run' ? `run:${mode.runId}` : mode.kind === 'version' ? `version:${mode.version}` : 'edit'
            }
            nodes={nodes}
            edges={edges}
            nodeTypes={NODE_TYPES}
            onNodesChange={onNodesChange}
            onEdgesChange={onEdgesChange}
            onConnect={editing ? onConnect : undefined}
            onDelete={onDelete}
            onNodeDragStart={() => editing && history && (dragOrigin.current = history.present)}
            onNodeDragStop={() => {
              const origin = dragOrigin.current;
              dragOrigin.current = null;
              if (origin) setHistory((h) => (h ? commitGesture(h, origin) : h));
            }}
            nodesConnectable={editing}
            elementsSelectable
            deleteKeyCode={editing ? ['Delete', 'Backspace'] : null}
            isValidConnection={(c) => c.target !== TRIGGER_ID && c.source !== c.target}
            onPaneClick={() => setSelected(null)}
            onNodeClick={() => setSide('node')}
            fitView={!large}
            defaultViewport={large ? startViewport : undefined}
            minZoom={0.1}
            onlyRenderVisibleElements={large}
            fitViewOptions={{ maxZoom: 1 }}
          >
            <Background />
            <Controls />
            {model.definition.nodes.length > 20 && <MiniMap pannable zoomable />}
          </ReactFlow>
        </div>
        <aside className="side">
          <div className="tabs">
            {(['node', 'versions', 'runs'] as Side[]).map((s) => (
              <button
                key={s}
                className={side === s ? 'active' : ''}
                onClick={() => setSide(s)}
                data-testid={`tab-${s}`}
              >
                {s === 'node' ? 'Step' : s === 'versions' ? 'Versions' : 'Runs'}
              </button>
            ))}
          </div>
          {side === 'node' &&
            (selected === TRIGGER_ID ? (
              <TriggerForm
                trigger={model.definition.trigger}
                webhookUrl={workflow.webhookUrl}
                readOnly={!editing}
                errors={errorsByNode[TRIGGER_ID] ?? []}
                onChange={(trigger) => apply((m) => ({ ...m, definition: { ...m.definition, trigger } }), 'trigger')}
              />
            ) : selectedNode ? (
              <NodeForm
                key={selectedNode.id}
                node={selectedNode}
                errors={errorsByNode[selectedNode.id] ?? []}
                templates={templates}
                readOnly={!editing}
                onChange={(patch, field) =>
                  apply((m) => updateNode(m, selectedNode.id, patch), `${selectedNode.id}:${field}`)
                }
                onRename={(id) => {
                  apply((m) => renameNode(m, selectedNode.id, id));
                  setSelected(id);
                }}
                onDelete={() => onDelete({ nodes: [{ id: selectedNode.id } as FlowNode], edges: [] })}
              />
            ) : (
              <p className="hint">Select a step (or the trigger) to edit it.</p>
            ))}
          {side === 'versions' && (
            <VersionsPanel workflowId={workflowId} onView={viewVersion} onRestore={restoreVersion} />
          )}
          {side === 'runs' && (
            <RunPanel
              workflowId={workflowId}
              me={me}
              run={mode.kind === 'run' ? mode.run : null}
              definition={model.definition}
              onOpen={openRun}
              draftUnpublished={hasDraft}
            />
          )}
        </aside>
      </div>
    </div>
  );
}

function VersionsPanel({
  workflowId,
  onView,
  onRestore,
}: {
  workflowId: number;
  onView: (v: number) => void;
  onRestore: (v: number) => void;
}) {
  const [versions, setVersions] = useState<Array<{
    version: number;
    current: boolean;
    nodeCount: number;
    createdAt: string;
  }> | null>(null);
  useEffect(() => {
    workflowsApi.versions(workflowId).then(setVersions, () => setVersions([]));
  }, [workflowId]);
  if (!versions) return <p>Loading…</p>;
  return (
    <ul className="list" data-testid="versions">
      {versions.map((v) => (
        <li key={v.version}>
          <strong>v{v.version}</strong> {v.current && <span className="pill">live</span>}
          <br />
          <small>
            {new Date(v.createdAt).toLocaleString()} · {v.nodeCount} steps
          </small>
          <div>
            <button className="link" onClick={() => onView(v.version)}>
              View
            </button>
            <button className="link" onClick={() => onRestore(v.version)}>
              Restore as draft
            </button>
          </div>
        </li>
      ))}
    </ul>
  );
}
