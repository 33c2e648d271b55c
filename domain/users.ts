/** Who a user is to Paygate: roles and KYC states (docs/access.md#roles, docs/kyc.md#states). */
export const ROLES = ['user', 'compliance', 'admin'] as const;
export type Role = (typeof ROLES)[number];
export const KYC_STATUSES = ['unverified', 'pending', 'verified', 'rejected'] as const;
export type KycStatus = (typeof KYC_STATUSES)[number];
export const KYC_ID_TYPES = ['national_id', 'passport', 'alien_id'] as const;
export type KycIdType = (typeof KYC_ID_TYPES)[number];
