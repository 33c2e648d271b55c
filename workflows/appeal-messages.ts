import { defineQuery, defineUpdate } from '@temporalio/workflow';
import type { AppealDecided, AppealDecision, AppealStatus } from '../domain/appeals/contract';

/** The appeal workflow's messages, shared by the workflow and its client (`workflows/client.ts`). */

export const approveAppealUpdate = defineUpdate<AppealDecided, [AppealDecision]>('approve');
/** The second approval of a refund at or above `FOUR_EYES_ABOVE_KES`: never by its first approver. */
export const secondApproveAppealUpdate = defineUpdate<AppealDecided, [AppealDecision]>('approve-second');
export const rejectAppealUpdate = defineUpdate<AppealDecided, [AppealDecision]>('reject');
export const appealStatusQuery = defineQuery<AppealStatus>('status');
