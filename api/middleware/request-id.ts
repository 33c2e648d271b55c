import type { RequestHandler } from 'express';
import { uuidv7 } from '../../platform/ids';

const SAFE_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** Echo a well-formed `X-Request-Id`, or assign one; every response and log line carries it. */
export const requestId: RequestHandler = (req, res, next) => {
  const given = req.get('X-Request-Id');
  const id = given && SAFE_ID.test(given) ? given : uuidv7();
  (req as { id?: string }).id = id;
  res.setHeader('X-Request-Id', id);
  next();
};
