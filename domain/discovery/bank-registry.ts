import { z } from 'zod';
import registryFile from './kenyan-banks.json';

/**
 * The curated registry of CBK-licensed Kenyan banks, kept as data in `kenyan-banks.json`. Each row says
 * where it came from and when it was checked, so a reviewer can re-verify it; the file is validated when
 * first read, and a broken edit fails the bank refresh loudly instead of shipping a half-read registry.
 */

const bankRow = z.strictObject({
  code: z.string().regex(/^\d{2,3}$/),
  name: z.string().min(2),
  swift_bic: z
    .string()
    .regex(/^[A-Z]{6}[A-Z0-9]{2}([A-Z0-9]{3})?$/)
    .nullable(),
  swift_bic_confirmed: z.boolean(),
  pesalink: z.boolean(),
  source: z.string().min(10),
  verified_on: z.iso.date(),
});

const registrySchema = z.strictObject({
  description: z.string(),
  banks: z
    .array(bankRow)
    .min(1)
    .refine((rows) => new Set(rows.map((r) => r.code)).size === rows.length, 'bank codes must be unique'),
});

export type BankRegistryEntry = z.infer<typeof bankRow>;

let cached: BankRegistryEntry[] | undefined;

/** Every bank in the registry, in code order. */
export function kenyanBankRegistry(): BankRegistryEntry[] {
  if (!cached) {
    const parsed = registrySchema.safeParse(registryFile);
    if (!parsed.success) {
      throw new Error(`kenyan-banks.json is invalid: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`);
    }
    cached = [...parsed.data.banks].sort((a, b) => a.code.localeCompare(b.code));
  }
  return cached;
}

/** What the primary bank (reached through its own connector) offers beyond receiving payments. */
export const PRIMARY_BANK_CAPABILITIES = ['payments', 'balance', 'transactions'] as const;
/** What every other bank offers: Paygate can pay into it, through the primary bank. */
export const ADDITIONAL_BANK_CAPABILITIES = ['payments'] as const;
