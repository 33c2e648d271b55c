import { createHmac, generateKeyPairSync, sign as cryptoSign } from 'node:crypto';
import { expect } from 'chai';
import jwt from 'jsonwebtoken';
import { config } from '../../platform/config';
import { api, newUser, type TestUser } from '../support/api';
import { expectSafeProblem as expectProblem } from '../support/problems';
import { call, fillPath, pathParameters, specOperations, UNKNOWN_ID } from './support';

/**
 * OWASP API2 (broken authentication): forged bearer tokens. Each forgery claims every role for a real
 * account and is sent to every operation that needs a token; each must be a 401 `unauthenticated` problem.
 */

const b64 = (value: unknown): string => Buffer.from(JSON.stringify(value)).toString('base64url');

/** A token with any header and claims, signed by `signer` over `<header>.<payload>`. */
function handMade(header: Record<string, unknown>, claims: Record<string, unknown>, signer: (input: string) => string): string {
  const input = `${b64(header)}.${b64(claims)}`;
  return `${input}.${signer(input)}`;
}

function validClaims(user: TestUser, overrides: Record<string, unknown> = {}): Record<string, unknown> {
  const { jwt: cfg } = config();
  const now = Math.floor(Date.now() / 1000);
  return {
    sub: user.id,
    roles: ['user', 'compliance', 'admin'],
    iss: cfg.issuer,
    aud: cfg.audience,
    iat: now,
    exp: now + 300,
    ...overrides,
  };
}

/** Signed with the server's own secret and algorithm: what the forgeries differ from. */
const hmac = (secret: string | Buffer, input: string) => createHmac('sha256', secret).update(input).digest('base64url');

/** Claims set to undefined are left out. */
const genuine = (claims: Record<string, unknown>): string =>
  handMade({ alg: 'HS256', typ: 'JWT' }, claims, (input) => hmac(config().jwt.secret, input));

function forgeries(user: TestUser): Record<string, string[]> {
  const secret = config().jwt.secret;
  const now = Math.floor(Date.now() / 1000);
  const claims = validClaims(user);
  const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const publicPem = rsa.publicKey.export({ type: 'spki', format: 'pem' }).toString();
  const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const [header, payload, signature] = genuine(claims).split('.') as [string, string, string];
  const flipped = Buffer.from(signature, 'base64url');
  flipped[0] = flipped[0] ^ 0xff;
  const withoutSub = { ...claims };
  delete withoutSub.sub;

  return {
    'alg "none"': ['none', 'None', 'NONE', 'nOnE'].flatMap((alg) => [
      handMade({ alg, typ: 'JWT' }, claims, () => ''),
      handMade({ alg, typ: 'JWT' }, claims, (input) => hmac(secret, input)),
    ]),
    'a bad signature': [
      `${header}.${payload}.${flipped.toString('base64url')}`,
      `${header}.${payload}.`,
      jwt.sign(claims, `${secret}-guessed`, { algorithm: 'HS256' }),
      // The claims of a genuine token swapped for escalated ones, the signature kept.
      `${header}.${b64({ ...claims, sub: user.id, roles: ['admin'] })}.${signature}`,
    ],
    expired: [
      genuine(validClaims(user, { iat: now - 600, exp: now - 60 })),
      genuine(validClaims(user, { iat: now - 24 * 3600, exp: now + 3600 })),
      genuine(validClaims(user, { nbf: now + 3600 })),
    ],
    'a wrong iss': [genuine(validClaims(user, { iss: 'someone-else' })), genuine(validClaims(user, { iss: undefined }))],
    'a wrong aud': [genuine(validClaims(user, { aud: 'another-api' })), genuine(validClaims(user, { aud: undefined }))],
    'no sub': [genuine(withoutSub), genuine(validClaims(user, { sub: '' })), genuine(validClaims(user, { sub: 42 }))],
    'a key confusion': [
      // RS256 with an attacker's key, its public half embedded for the server to "verify" with (jwk injection).
      handMade({ alg: 'RS256', typ: 'JWT', jwk: rsa.publicKey.export({ format: 'jwk' }) }, claims, (input) =>
        cryptoSign('sha256', Buffer.from(input), rsa.privateKey).toString('base64url'),
      ),
      // HS256 keyed with a public key PEM: how RS256/HS256 confusion forges tokens when the server holds a public key.
      handMade({ alg: 'HS256', typ: 'JWT' }, claims, (input) => hmac(publicPem, input)),
      // The header switched to RS256 (and HS512) over a signature made with the server's real secret.
      handMade({ alg: 'RS256', typ: 'JWT' }, claims, (input) => hmac(secret, input)),
      handMade({ alg: 'HS512', typ: 'JWT' }, claims, (input) => createHmac('sha512', secret).update(input).digest('base64url')),
      // ES256 with an attacker's key, and a key id / key URL pointing elsewhere.
      handMade({ alg: 'ES256', typ: 'JWT', kid: '../../../../dev/null' }, claims, (input) =>
        cryptoSign('sha256', Buffer.from(input), { key: ec.privateKey, dsaEncoding: 'ieee-p1363' }).toString('base64url'),
      ),
      handMade({ alg: 'RS256', typ: 'JWT', jku: 'https://attacker.example/jwks.json' }, claims, (input) =>
        cryptoSign('sha256', Buffer.from(input), rsa.privateKey).toString('base64url'),
      ),
    ],
  };
}

describe('security: forged bearer tokens', () => {
  let user: TestUser;
  let forged: Record<string, string[]>;

  before(async () => {
    user = await newUser();
    forged = forgeries(user);
  });

  it('a token signed like the server signs them is accepted (control)', async () => {
    const res = await api()
      .get('/api/v1/auth/me')
      .set('Authorization', `Bearer ${genuine(validClaims(user, { roles: ['user'] }))}`);
    expect(res.status, res.text).to.equal(200);
  });

  for (const kind of ['alg "none"', 'a bad signature', 'expired', 'a wrong iss', 'a wrong aud', 'no sub', 'a key confusion']) {
    describe(`when a token has ${kind}`, () => {
      it('then every operation that needs a token answers 401 unauthenticated', async function () {
        this.timeout(60_000);
        const secured = (await specOperations()).filter((op) => op.roles !== undefined);
        expect(secured.length).to.be.greaterThan(15);
        expect(forged[kind].length).to.be.greaterThan(0);
        for (const token of forged[kind]) {
          for (const op of secured) {
            const values = Object.fromEntries(pathParameters(op.path).map((name) => [name, UNKNOWN_ID]));
            const res = await call(op.method, fillPath(op.path, values), {
              token,
              body: op.method === 'get' || op.method === 'delete' ? undefined : {},
              headers: { 'Idempotency-Key': `jwt-${Math.random()}` },
            });
            expectProblem(res, 401, 'unauthenticated', `${op.key} with ${kind}`);
          }
          const dashboard = await api().get('/admin/queues').set('Authorization', `Bearer ${token}`);
          expectProblem(dashboard, 401, 'unauthenticated', `/admin/queues with ${kind}`);
        }
      });
    });
  }
});
