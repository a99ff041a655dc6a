import { lazy, Suspense, useEffect, useState } from 'react';
import { fetchMe, setSession, signOut, whenSignedOut, type Me } from './api';
import { CampaignsPage } from './pages/campaigns/CampaignsPage';
import { InboxPage } from './pages/InboxPage';
import { Placeholder } from './pages/Placeholder';
import { SignIn } from './pages/SignIn';
import { WorkflowsList } from './pages/WorkflowsList';
import { ContactsPage } from './pages/contacts/ContactsPage';
import { TemplatesPage } from './pages/templates/TemplatesPage';
import { navigate, usePath } from './router';

// The builder (React Flow, forms, run view) is its own chunk: the sign-in and list pages stay light. Opened
// directly on a workflow's URL, the chunk is fetched at once, alongside the session check.
const loadBuilder = () => import('./builder/WorkflowBuilder');
if (/^\/app\/workflows\/\d+/.test(window.location.pathname)) void loadBuilder();
const WorkflowBuilder = lazy(loadBuilder);

const NAV = [
  { path: '/workflows', label: 'Workflows', grant: '/workflows' },
  { path: '/templates', label: 'Templates', grant: '/templates' },
  { path: '/contacts', label: 'Contacts', grant: '/contacts' },
  { path: '/campaigns', label: 'Campaigns', grant: '/campaigns' },
  { path: '/inbox', label: 'Inbox', grant: '/conversations' },
];

export function App() {
  const [me, setMe] = useState<Me | null | undefined>(undefined);
  const path = usePath();

  useEffect(() => {
    whenSignedOut(() => {
      setSession(null);
      setMe(null);
    });
    fetchMe().then(
      (m) => {
        setSession(m);
        setMe(m);
      },
      () => setMe(null),
    );
  }, []);

  if (me === undefined) return <div className="loading">Loading…</div>;
  if (me === null)
    return (
      <SignIn
        onSignedIn={(m) => {
          setSession(m);
          setMe(m);
          if (path === '/' || path === '/sign-in') navigate(m.grants.includes('/workflows') ? '/workflows' : '/inbox');
        }}
      />
    );

  const section = NAV.find((n) => path.startsWith(n.path)) ?? (path === '/' ? undefined : null);
  const allowed = section ? me.grants.includes(section.grant) : true;
  const builderMatch = /^\/workflows\/(\d+)/.exec(path);

  let page;
  if (path === '/' || path === '/sign-in')
    page = <Placeholder title="Welcome" text={`Signed in as ${me.email} (${me.role}).`} />;
  else if (!section) page = <Placeholder title="Not found" text="There is no such page." />;
  else if (!allowed)
    page = (
      <Placeholder
        title="Not allowed"
        text={`Your role (${me.role}) cannot open ${section.label}.`}
        testId="not-allowed"
      />
    );
  else if (builderMatch)
    page = (
      <Suspense fallback={<div className="loading">Loading the builder…</div>}>
        <WorkflowBuilder workflowId={Number(builderMatch[1])} me={me} />
      </Suspense>
    );
  else if (section.path === '/workflows') page = <WorkflowsList />;
  else if (section.path === '/templates') page = <TemplatesPage path={path} me={me} />;
  else if (section.path === '/contacts') page = <ContactsPage path={path} />;
  else if (section.path === '/campaigns') page = <CampaignsPage path={path} me={me} />;
  else if (section.path === '/inbox') page = <InboxPage me={me} />;
  else page = <Placeholder title={section.label} text="Coming soon." />;

  return (
    <div className="shell">
      <nav className="nav">
        <div className="brand">Switchboard</div>
        {NAV.filter((n) => me.grants.includes(n.grant)).map((n) => (
          <a
            key={n.path}
            href={`/app${n.path}`}
            className={section?.path === n.path ? 'active' : ''}
            onClick={(e) => (e.preventDefault(), navigate(n.path))}
          >
            {n.label}
          </a>
        ))}
        <div className="spacer" />
        <div className="who" data-testid="who">
          {me.email}
          <br />
          <small>{me.role}</small>
        </div>
        <button
          className="link"
          onClick={async () => {
            await signOut().catch(() => undefined);
            setSession(null);
            setMe(null);
          }}
        >
          Sign out
        </button>
      </nav>
      <main className="main">{page}</main>
    </div>
  );
}
