import { Readable } from 'node:stream';
import type { Request as ExpressRequest } from 'express';
import {
  Body,
  Controller,
  Example,
  Get,
  OperationId,
  Path,
  Post,
  Produces,
  Request,
  Response,
  Route,
  Security,
  SuccessResponse,
  Tags,
} from 'tsoa';
import type { Caller } from '../auth/authentication';
import type { Problem } from '../problem';
import type { Uuid } from '../schema-types';
import { createCtrReport, goamlReportXml, type GoamlReportView } from '../../services/goaml-service';

interface CtrBody {
  /**
   * RFC 3339 or YYYY-MM-DD (midnight UTC), inclusive.
   * @example "2026-11-01"
   * @maxLength 40
   */
  from: string;
  /**
   * RFC 3339 or YYYY-MM-DD (midnight UTC), exclusive; at most 31 days after `from`, and not in the future.
   * @example "2026-11-02"
   * @maxLength 40
   */
  to: string;
}

/**
 * goAML reports to Kenya's Financial Reporting Centre (docs/compliance.md#goaml-reports): compliance staff, with
 * their login (never an API key), make a CTR for a period and read any report's XML.
 */
@Route('compliance/goaml')
@Tags('Compliance')
@Security('jwt', ['compliance', 'admin'])
export class GoamlController extends Controller {
  /**
   * Make a currency transaction report (CTR) for a period: every completed payout and deposit created in it whose
   * KES equivalent is at or above the CTR threshold (`CTR_THRESHOLD_KES`), rendered as goAML XML, kept
   * unchangeable and audited. Answers the report's id, counts and where its XML is read.
   * @summary Make a goAML CTR
   */
  @Post('ctr')
  @SuccessResponse(201, 'Created')
  @Response<Problem>(400, 'Bad period, or one with too many movements for one report')
  @Response<Problem>(401, 'Unauthenticated')
  @Response<Problem>(403, 'Not compliance staff, or an API key')
  @Response<Problem>(409, 'No movement at or above the threshold in the period: nothing to report')
  @Response<Problem>(503, 'goAML reporting is not configured (GOAML_RENTITY_ID and the reporting person)')
  @Example<GoamlReportView>({
    report_id: '01a20710-2b3c-7d4e-8f50-616263646566',
    kind: 'CTR',
    period: { from: '2026-11-01T00:00:00.000Z', to: '2026-11-02T00:00:00.000Z' },
    created_by: '01a205da-1b2c-7d3e-8f40-515253545556',
    created_at: '2026-11-02T06:00:00.000Z',
    threshold_kes: '1935000.00',
    counts: { transactions: 2, orders: 1, deposits: 1 },
    total_kes: '4100000.00',
    xml_url: '/api/v1/compliance/goaml/01a20710-2b3c-7d4e-8f50-616263646566.xml',
  })
  @OperationId('createGoamlCtr')
  public async createCtr(@Body() body: CtrBody, @Request() req: ExpressRequest & { user: Caller }): Promise<GoamlReportView> {
    const report = await createCtrReport(req.user, body);
    this.setStatus(201);
    this.setHeader('Location', report.xml_url);
    return report;
  }

  /**
   * A goAML report's XML exactly as it was made (`application/xml`), to upload to the FRC's goAML.
   * @param report_id the report's id
   * @summary Get a goAML report's XML
   */
  @Get('{report_id}.xml')
  @Produces('application/xml')
  @Response<Problem>(400, 'Malformed report id')
  @Response<Problem>(401, 'Unauthenticated')
  @Response<Problem>(403, 'Not compliance staff, or an API key')
  @Response<Problem>(404, 'No such report')
  @OperationId('getGoamlReportXml')
  public async xml(@Path('report_id') reportId: Uuid, @Request() req: ExpressRequest & { user: Caller }): Promise<Readable> {
    const { xml, filename } = await goamlReportXml(req.user, reportId);
    this.setHeader('Content-Type', 'application/xml; charset=utf-8');
    this.setHeader('Content-Disposition', `attachment; filename="${filename}"`);
    return Readable.from([xml]);
  }
}
