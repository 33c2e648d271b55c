import { Op, type WhereOptions } from 'sequelize';
import { AuditEntry } from '../models';
import { uuidv7 } from '../platform/ids';
import type { AuditActor, StaffAction } from '../domain/audit';
import type { Tx } from './transaction';

/**
 * The audit trail of staff actions (`audit_entries`, docs/compliance.md#audit-trail): every read and write of
 * it. Entries are only ever added; the database refuses UPDATE, DELETE and TRUNCATE on the table.
 */

export interface AuditRecord extends StaffAction {
  id: string;
  occurredAt: Date;
  actor: AuditActor;
}

const record = (r: AuditEntry): AuditRecord => ({
  id: r.id,
  occurredAt: r.occurredAt,
  actor: {
    userId: r.actorId,
    roles: r.actorRoles,
    credentialKind: r.credentialKind,
    credentialId: r.credentialId,
    requestId: r.requestId,
  },
  action: r.action as StaffAction['action'],
  subjectType: r.subjectType as StaffAction['subjectType'],
  subjectId: r.subjectId,
  before: r.before,
  after: r.after,
});

/** Add one entry, in `tx` when given: the action's own transaction, so the action and its entry commit together. */
export async function appendAuditEntry(actor: AuditActor, action: StaffAction, tx?: Tx): Promise<AuditRecord> {
  const created = await AuditEntry.create(
    {
      id: uuidv7(),
      actorId: actor.userId,
      actorRoles: actor.roles,
      credentialKind: actor.credentialKind,
      credentialId: actor.credentialId,
      requestId: actor.requestId,
      action: action.action,
      subjectType: action.subjectType,
      subjectId: action.subjectId,
      before: action.before,
      after: action.after,
    },
    { transaction: tx },
  );
  return record(created);
}

export interface AuditFilter {
  actorId?: string;
  action?: string;
  subjectType?: string;
  subjectId?: string;
  from?: Date;
  to?: Date;
}

/** Entries matching every filter given, newest first, keyset-paged on the time-ordered id. */
export async function listAuditEntries(filter: AuditFilter, before: string | null, take: number): Promise<AuditRecord[]> {
  const where: WhereOptions<AuditEntry>[] = [];
  if (filter.actorId !== undefined) where.push({ actorId: filter.actorId });
  if (filter.action !== undefined) where.push({ action: filter.action });
  if (filter.subjectType !== undefined) where.push({ subjectType: filter.subjectType });
  if (filter.subjectId !== undefined) where.push({ subjectId: filter.subjectId });
  if (filter.from !== undefined) where.push({ occurredAt: { [Op.gte]: filter.from } });
  if (filter.to !== undefined) where.push({ occurredAt: { [Op.lt]: filter.to } });
  if (before !== null) where.push({ id: { [Op.lt]: before } });
  const rows = await AuditEntry.findAll({ where: { [Op.and]: where }, order: [['id', 'DESC']], limit: take });
  return rows.map(record);
}
