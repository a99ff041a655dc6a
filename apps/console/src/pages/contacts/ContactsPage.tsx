import { useCallback, useEffect, useState } from 'react';
import { contactsApi, type ContactItem, type GroupItem } from '../../api';
import { useLatestRead } from '../../latest-read';
import { navigate } from '../../router';
import { ContactDetail, OptOut } from './ContactDetail';

/** /contacts (list, optionally one group's members) and /contacts/{id} (a contact's detail). */
export function ContactsPage({ path }: { path: string }) {
  const detail = /^\/contacts\/(\d+)$/.exec(path);
  if (detail) return <ContactDetail contactId={Number(detail[1])} />;
  return <ContactsList />;
}

function ContactsList() {
  const [groups, setGroups] = useState<GroupItem[]>([]);
  const [groupId, setGroupId] = useState<number | null>(null);
  const [rows, setRows] = useState<ContactItem[] | null>(null);
  const [total, setTotal] = useState(0);
  const [page, setPage] = useState(1);
  const [search, setSearch] = useState('');
  const [error, setError] = useState('');
  const [newGroup, setNewGroup] = useState('');
  const [renaming, setRenaming] = useState<string | null>(null);

  const loadGroups = useCallback(() => contactsApi.groups().then(setGroups, (e) => setError(e.message)), []);
  useEffect(() => void loadGroups(), [loadGroups]);

  const latest = useLatestRead();
  const load = useCallback(() => {
    const request = groupId ? contactsApi.members(groupId, page, search) : contactsApi.list({ page, search });
    latest(request).then(
      (r) => {
        setRows(r.contacts);
        setTotal(r.total);
        setError('');
      },
      (e) => setError(e.message),
    );
  }, [groupId, page, search, latest]);
  useEffect(load, [load]);

  const selected = groups.find((g) => g.group_id === groupId) ?? null;
  const act = async (work: () => Promise<unknown>) => {
    try {
      await work();
      setError('');
    } catch (e) {
      setError((e as Error).message);
    }
  };

  const pages = Math.max(1, Math.ceil(total / 20));
  return (
    <div className="page contacts-page">
      <div className="page-head">
        <h1>Contacts</h1>
        <input
          name="contact-search"
          placeholder="Search name, number or email"
          value={search}
          onChange={(e) => (setPage(1), setSearch(e.target.value))}
        />
      </div>
      {error && (
        <p className="error" role="alert">
          {error}
        </p>
      )}
      <div className="contacts-columns">
        <aside className="groups-panel" data-testid="groups">
          <h3>Groups</h3>
          <button
            className={`group-item${groupId === null ? ' active' : ''}`}
            onClick={() => (setPage(1), setGroupId(null))}
          >
            All contacts
          </button>
          {groups.map((g) => (
            <button
              key={g.group_id}
              className={`group-item${g.group_id === groupId ? ' active' : ''}`}
              data-group={g.name}
              onClick={() => (setPage(1), setRenaming(null), setGroupId(g.group_id))}
            >
              {g.name} <span className="count">{g.member_count}</span>
            </button>
          ))}
          <form
            className="inline"
            onSubmit={(e) => {
              e.preventDefault();
              void act(async () => {
                const g = await contactsApi.createGroup(newGroup.trim());
                setNewGroup('');
                await loadGroups();
                setGroupId(g.group_id);
              });
            }}
          >
            <input
              name="new-group"
              placeholder="New group"
              value={newGroup}
              onChange={(e) => setNewGroup(e.target.value)}
            />
            <button type="submit" data-testid="create-group">
              Add
            </button>
          </form>
        </aside>
        <section className="contacts-main">
          {selected && (
            <div className="group-head" data-testid="group-head">
              {renaming === null ? (
                <>
                  <h2>{selected.name}</h2>
                  <span className="hint">
                    {selected.member_count} member{selected.member_count === 1 ? '' : 's'}
                  </span>
                  <button className="link" data-testid="rename-group" onClick={() => setRenaming(selected.name)}>
                    Rename
                  </button>
                  <button
                    className="link"
                    data-testid="delete-group"
                    onClick={() => {
                      if (!window.confirm(`Delete the group "${selected.name}"? Its contacts stay.`)) return;
                      void act(async () => {
                        await contactsApi.deleteGroup(selected.group_id);
                        setGroupId(null);
                        await loadGroups();
                      });
                    }}
                  >
                    Delete
                  </button>
                </>
              ) : (
                <form
                  className="inline"
                  onSubmit={(e) => {
                    e.preventDefault();
                    void act(async () => {
                      await contactsApi.renameGroup(selected.group_id, renaming);
                      setRenaming(null);
                      await loadGroups();
                    });
                  }}
                >
                  <input name="group-name" value={renaming} onChange={(e) => setRenaming(e.target.value)} />
                  <button type="submit" className="primary" data-testid="save-group-name">
                    Save
                  </button>
                  <button type="button" onClick={() => setRenaming(null)}>
                    Cancel
                  </button>
                </form>
              )}
            </div>
          )}
          {rows === null ? (
            <p>Loading…</p>
          ) : rows.length === 0 ? (
            <p>{search ? 'No contact matches.' : selected ? 'This group has no members yet.' : 'No contacts yet.'}</p>
          ) : (
            <table className="table" data-testid="contacts-table">
              <thead>
                <tr>
                  <th>Name</th>
                  <th>Number</th>
                  <th>Email</th>
                  <th>Opt-out</th>
                  <th>Created</th>
                  {selected && <th />}
                </tr>
              </thead>
              <tbody>
                {rows.map((c) => (
                  <tr key={c.contact_id} data-contact={c.contact_id}>
                    <td>
                      <a
                        href={`/app/contacts/${c.contact_id}`}
                        onClick={(e) => (e.preventDefault(), navigate(`/contacts/${c.contact_id}`))}
                      >
                        {c.name ?? '(no name)'}
                      </a>
                    </td>
                    <td>{c.contact_number ? `+${c.contact_number}` : c.whatsapp_user_id}</td>
                    <td>{c.email ?? ''}</td>
                    <td>
                      <OptOut blocked={c.isBlocked} />
                    </td>
                    <td>{new Date(c.created_at).toLocaleDateString()}</td>
                    {selected && (
                      <td>
                        <button
                          className="link"
                          onClick={() =>
                            void act(async () => {
                              await contactsApi.removeMembers(selected.group_id, [c.contact_id]);
                              load();
                              await loadGroups();
                            })
                          }
                        >
                          Remove from group
                        </button>
                      </td>
                    )}
                  </tr>
                ))}
              </tbody>
            </table>
          )}
          <div className="pager">
            <button disabled={page <= 1} onClick={() => setPage(page - 1)}>
              Previous
            </button>
            <span data-testid="contacts-total">
              Page {page} of {pages} · {total} contact{total === 1 ? '' : 's'}
            </span>
            <button disabled={page >= pages} onClick={() => setPage(page + 1)}>
              Next
            </button>
          </div>
        </section>
      </div>
    </div>
  );
}
