import { uuidv7 } from '../../platform/ids';
import { insertGoamlReport } from '../../repositories/goaml-reports';

/** A kept goAML CTR, stored straight through its repository: an object for the authorisation matrices to name. */
export async function storedGoamlReport(createdBy: string): Promise<string> {
  const id = uuidv7();
  await insertGoamlReport({
    id,
    kind: 'CTR',
    periodFrom: new Date('2026-01-01T00:00:00Z'),
    periodTo: new Date('2026-01-02T00:00:00Z'),
    createdBy,
    createdAt: new Date(),
    transactionCount: 0,
    totalKesMinor: 0n,
    thresholdKesMinor: 193_500_000n,
    xml: '<?xml version="1.0" encoding="UTF-8"?>\n<report/>\n',
  });
  return id;
}
