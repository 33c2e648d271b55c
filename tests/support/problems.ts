import { expect } from 'chai';

/**
 * Error answers: every one is an RFC 9457 problem (application/problem+json) with the members the README's
 * "Errors" section lists. Suites check more or less of it, and each kind of check is written here once.
 */

/** An answer as supertest gives it: only what the checks read. */
export interface Answer {
  status: number;
  headers: Record<string, string>;
  body: unknown;
  text?: string;
}

export interface ProblemBody {
  type: string;
  title: string;
  status: number;
  detail: string;
  code: string;
  errors?: { field: string; message: string }[];
  request_id: string;
}

/**
 * Traces of the server's insides that no answer may carry: stack frames, file paths, SQL, ORM and driver names.
 */
const LEAKS: [RegExp, string][] = [
  [/\bat [\w.<>$]+ \(/, 'a stack frame'],
  [/\n\s+at /, 'a stack frame'],
  [/(\/work\/|\/home\/|\/usr\/|\/app\/|node_modules|\.ts:\d+|\.js:\d+)/, 'a file path'],
  [/\b(SELECT|INSERT INTO|UPDATE \w+ SET|DELETE FROM)\b/, 'SQL'],
  [/sequelize/i, 'the ORM'],
  [/\bpg(-pool)?\b|postgres(ql)? error|violates .* constraint|relation "\w+"/i, 'the database'],
  [/ioredis|ECONNREFUSED|temporalio/i, 'an infrastructure client'],
];

/** No trace of the server's insides in the answer's text, and no field that carries one in its body. */
export function expectNoLeak(res: Answer, what = `${res.status} answer`): void {
  const text = res.text ?? '';
  for (const [pattern, name] of LEAKS) expect(pattern.test(text), `${what} reveals ${name}: ${text.slice(0, 400)}`).to.equal(false);
  const body = res.body as Record<string, unknown> | undefined;
  if (body && typeof body === 'object' && !Array.isArray(body)) {
    for (const field of ['stack', 'stackTrace', 'trace', 'sql', 'original', 'parent', 'cause']) {
      expect(body, `${what} has a "${field}" field`).not.to.have.property(field);
    }
  }
}

/**
 * Neither stack frames, file paths, SQL nor driver messages in a response body. Stricter than `expectNoLeak` on
 * words (any SQL verb in any case, any mention of postgres or a JSON parser's error), looser on the body's fields.
 */
export function expectNoInternals(text: string): void {
  expect(text).not.to.match(/\bat [\w.<>]+ \(|\.(ts|js):\d+|node_modules/);
  expect(text).not.to.match(/\b(SELECT|INSERT|UPDATE|DELETE FROM)\b|sequelize|postgres|SyntaxError|Unexpected token/i);
}

/** What, besides the status, the content type and the code, a check asks of the problem. */
export interface ProblemChecks {
  /** The body repeats the answer's status. */
  status?: boolean;
  /** `named`: title is a string; `described`: type is an https URI, and title and detail are not empty. */
  title?: 'named' | 'described';
  /** request_id is a non-empty string. */
  requestId?: boolean;
  /** request_id is the answer's X-Request-Id header. */
  requestIdHeader?: boolean;
  /** What must not show through, checked last. */
  leaks?: 'internals' | 'traces';
}

/**
 * `(res, status, code?, what?)`: the answer is a problem with this status and (when given) this code, checked as
 * `checks` asks; `what` names the answer in failure messages. Returns the body.
 */
export function problemExpectation(checks: ProblemChecks = {}) {
  return (res: Answer, status: number, code?: string, what = ''): ProblemBody => {
    const named = (message: string) => (what ? `${what}: ${message}` : message);
    expect(res.status, named(`${res.status} ${JSON.stringify(res.body)}`)).to.equal(status);
    expect(res.headers['content-type'], what).to.match(/^application\/problem\+json/);
    const problem = res.body as ProblemBody;
    if (checks.status) expect(problem.status, what).to.equal(status);
    if (code !== undefined) expect(problem.code, what).to.equal(code);
    if (checks.title === 'named') expect(problem.title, what).to.be.a('string');
    if (checks.title === 'described') {
      expect(problem.type, what)
        .to.be.a('string')
        .and.match(/^https:\/\//);
      expect(problem.title, what).to.be.a('string').and.not.empty;
      expect(problem.detail, what).to.be.a('string').and.not.empty;
    }
    if (checks.requestId) expect(problem.request_id, what).to.be.a('string').and.not.empty;
    if (checks.requestIdHeader) expect(problem.request_id, what).to.equal(res.headers['x-request-id']);
    if (checks.leaks === 'internals') expectNoInternals(res.text ?? '');
    if (checks.leaks === 'traces') expectNoLeak(res, what);
    return problem;
  };
}

/** The status, the problem content type and the code. */
export const expectProblem = problemExpectation();

/** As `expectProblem`, and the body repeats the status and carries the answer's X-Request-Id. */
export const expectTracedProblem = problemExpectation({ status: true, requestIdHeader: true });

/** Every member the README promises, each well formed, and nothing of the server's insides. */
export const expectCompleteProblem = problemExpectation({
  status: true,
  title: 'described',
  requestId: true,
  requestIdHeader: true,
  leaks: 'internals',
});

/** What the security suite asks of every error answer: a titled, traceable problem that reveals nothing. */
export const expectSafeProblem = problemExpectation({ status: true, title: 'named', requestId: true, leaks: 'traces' });
