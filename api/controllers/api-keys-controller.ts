import type { Request as ExpressRequest } from 'express';
import {
  Body,
  Controller,
  Delete,
  Get,
  Path,
  Post,
  Query,
  Request,
  Response,
  Route,
  Security,
  SuccessResponse,
  Tags,
  OperationId,
  Example,
} from 'tsoa';
import type { Caller } from '../auth/authentication';
import type { Problem } from '../problem';
import type { ApiKeyScopeName, Uuid } from '../schema-types';
import type { Page } from '../../services/paging';
import { createKey, listKeys, revokeKey, type ApiKeyView, type CreatedApiKey } from '../../services/api-key-service';

interface CreateApiKeyBody {
  /**
   * What the key is for, to tell it apart in lists.
   * @minLength 1
   * @maxLength 100
   * @pattern \S
   * @example "shop backend"
   */
  name: string;
  /**
   * What the key may do: `<area>:read` (GET) or `<area>:write` (anything else), for the areas api-keys (read
   * only), appeals, auth, events, p2p, payments, platforms, users, wallets and webhooks. The staff areas
   * (compliance, operations, sandbox) and `api-keys:write` are for people signed in: asking for them is 422
   * `scope_not_grantable`.
   * @minItems 1
   * @maxItems 24
   * @example ["payments:write", "payments:read", "wallets:read"]
   */
  scopes: ApiKeyScopeName[];
  /**
   * `test` keys reach only sandbox rails, `live` keys only real ones.
   * @example "test"
   */
  mode: 'test' | 'live';
  /**
   * When the key stops working (RFC 3339, in the future); from then on it is refused like a revoked key.
   * Without it the key works until revoked.
   * @example "2027-06-30T00:00:00Z"
   * @maxLength 40
   */
  expires_at?: string;
}

/**
 * API keys (docs/access.md#api-keys): long-lived, scoped, revocable secrets for merchant servers. Send one as
 * `Authorization: Bearer sk_…` on any operation open to keys: the request acts as the key's owner, as a
 * merchant (never with the owner's staff roles), within the key's scopes. The secret is shown once, when the
 * key is created. Keys are made and revoked by a person signed in, never with a key.
 */
@Route('api-keys')
@Tags('API keys')
@Security('jwt')
export class ApiKeysController extends Controller {
  /**
   * Create a key. The answer carries its `secret`, shown only here: Paygate keeps a hash of it.
   * @summary Create an API key
   */
  @Post()
  @SuccessResponse(201, 'Created')
  @Response<Problem>(400, 'Bad name, mode, scopes or expires_at (which must be in the future)')
  @Response<Problem>(403, 'forbidden: the request came with an API key; keys are made by a person signed in, never by a key')
  @Response<Problem>(
    409,
    'secret_not_replayed: a repeat of a request that created a key, with the same Idempotency-Key; the secret was shown once and is not replayed',
  )
  @Response<Problem>(
    422,
    'scope_not_grantable: a staff scope (compliance, operations, sandbox) or api-keys:write, which no key may hold (`errors` names `scopes`); ' +
      'limit_exceeded: the user already has API_KEYS_MAX_PER_USER keys in use (20 by default); key_mode_not_served',
  )
  @Example<CreatedApiKey>({
    key_id: '01a205e1-2b3c-7d4e-8f50-6172839405a6',
    name: 'shop backend',
    mode: 'test',
    prefix: 'sk_test_AbCdEfGh',
    scopes: ['payments:write', 'payments:read', 'wallets:read'],
    created_at: '2026-11-25T09:58:00.000Z',
    last_used_at: null,
    revoked_at: null,
    expires_at: '2027-06-30T00:00:00.000Z',
    secret: 'sk_test_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789-_AbCdE',
  })
  @OperationId('createApiKey')
  public async create(@Body() body: CreateApiKeyBody, @Request() req: ExpressRequest & { user: Caller }): Promise<CreatedApiKey> {
    const created = await createKey(req.user, body);
    this.setStatus(201);
    return created;
  }

  /**
   * The caller's keys, revoked ones included, newest first. Secrets are never shown again.
   * @param limit 1 to 100, default 20
   * @isInt limit
   * @minimum limit 1
   * @maximum limit 100
   * @param cursor `next_cursor` of the previous page
   * @summary List API keys
   * @maxLength cursor 200
   */
  @Get()
  @Response<Problem>(400, 'Bad limit or cursor')
  @OperationId('listApiKeys')
  public async list(
    @Request() req: ExpressRequest & { user: Caller },
    @Query() limit?: number,
    @Query() cursor?: string,
  ): Promise<Page<ApiKeyView>> {
    return listKeys(req.user, { limit, cursor });
  }

  /**
   * Revoke a key, at once: its very next request is refused.
   * @summary Revoke an API key
   */
  @Delete('{key_id}')
  @SuccessResponse(204, 'Revoked')
  @Response<Problem>(400, 'Malformed key id')
  @Response<Problem>(403, 'forbidden: the request came with an API key; keys are revoked by a person signed in, never by a key')
  @Response<Problem>(404, 'Not found')
  @OperationId('revokeApiKey')
  public async revoke(@Path('key_id') keyId: Uuid, @Request() req: ExpressRequest & { user: Caller }): Promise<void> {
    await revokeKey(req.user, keyId);
    this.setStatus(204);
  }
}
