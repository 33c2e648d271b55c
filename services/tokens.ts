import { createSecretKey } from 'node:crypto';
import jwt from 'jsonwebtoken';
import type { Config } from '../platform/config';
import type { Role } from '../domain/users';

export interface AccessTokenClaims {
  sub: string;
  roles: Role[];
}

export interface IssuedToken {
  access_token: string;
  token_type: 'Bearer';
  expires_in: number;
}

/** HS256, with issuer, audience and a short expiry; verification pins the same (see passport strategy). */
export function issueAccessToken(cfg: Config['jwt'], claims: AccessTokenClaims): IssuedToken {
  const token = jwt.sign({ roles: claims.roles }, createSecretKey(Buffer.from(cfg.secret)), {
    algorithm: 'HS256',
    subject: claims.sub,
    issuer: cfg.issuer,
    audience: cfg.audience,
    expiresIn: cfg.ttlSeconds,
  });
  return { access_token: token, token_type: 'Bearer', expires_in: cfg.ttlSeconds };
}
