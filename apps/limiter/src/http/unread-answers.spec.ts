import { UnreadAnswers, UnreadTotal } from './unread-answers';

const SESSION_MAX = 100;

describe('UnreadAnswers', () => {
  it('queues one answer of any size in a session that holds nothing, then up to its bound', () => {
    const session = new UnreadAnswers(0);
    expect(session.admits(500, SESSION_MAX)).toBe(true);
    session.queued(60, 0);
    expect(session.admits(40, SESSION_MAX)).toBe(true);
    expect(session.admits(41, SESSION_MAX)).toBe(false);
    session.taken(60, 5);
    expect(session.admits(500, SESSION_MAX)).toBe(true);
  });

  it('bounds what all sessions hold together, a session that holds nothing included', () => {
    // 10 000 sessions under their own bound each would hold 10 000 times it: the total is what bounds them.
    const total = new UnreadTotal(250);
    const sessions = [0, 1, 2].map(() => new UnreadAnswers(0, total));
    sessions[0]!.queued(100, 0);
    sessions[1]!.queued(100, 0);
    expect(sessions[2]!.admits(50, SESSION_MAX)).toBe(true);
    expect(sessions[2]!.admits(51, SESSION_MAX)).toBe(false);
    expect(sessions[0]!.admits(51, SESSION_MAX)).toBe(false);
    // What a session's client takes frees the total for every session.
    sessions[0]!.taken(100, 1);
    expect(total.bytes).toBe(100);
    expect(sessions[2]!.admits(150, SESSION_MAX)).toBe(true);
  });

  it('knows when a session holding answers has not moved them', () => {
    const session = new UnreadAnswers(0);
    expect(session.stalled(10_000, 1_000)).toBe(false);
    session.queued(10, 100);
    expect(session.stalled(1_099, 1_000)).toBe(false);
    expect(session.stalled(1_100, 1_000)).toBe(true);
  });
});
