import { commit, commitGesture, createHistory, redo, replace, undo } from './history';

describe('undo/redo history', () => {
  it('undoes and redoes steps; a new step clears the redo stack', () => {
    let h = createHistory('a');
    h = commit(h, 'b', undefined, 0);
    h = commit(h, 'c', undefined, 1);
    h = undo(h);
    expect(h.present).toBe('b');
    h = redo(h);
    expect(h.present).toBe('c');
    h = undo(undo(h));
    expect(h.present).toBe('a');
    h = commit(h, 'x', undefined, 2);
    expect(h.future).toEqual([]);
    expect(redo(h)).toBe(h);
    expect(undo(createHistory('a')).present).toBe('a');
  });

  it('typing in one field within a second is one step', () => {
    let h = createHistory('');
    h = commit(h, 'h', 'n1:text', 1000);
    h = commit(h, 'he', 'n1:text', 1500);
    h = commit(h, 'hey', 'n1:text', 2000);
    expect(undo(h).present).toBe('');
    h = commit(h, 'hey!', 'n1:text', 3500); // more than a second later: a new step
    expect(undo(h).present).toBe('hey');
  });

  it('a drag is one step back to where it started', () => {
    let h = createHistory('start');
    const origin = h.present;
    h = replace(h, 'moving 1');
    h = replace(h, 'moving 2');
    h = commitGesture(h, origin);
    expect(h.present).toBe('moving 2');
    expect(undo(h).present).toBe('start');
  });
});
