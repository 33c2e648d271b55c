import type { Request as ExpressRequest } from 'express';
import { Body, Controller, Example, Get, OperationId, Put, Request, Response, Route, Security, Tags } from 'tsoa';
import type { Caller } from '../auth/authentication';
import type { Problem } from '../problem';
import {
  changeMonitoringRules,
  getMonitoringRules,
  type MonitoringRulesChange,
  type MonitoringRulesView,
} from '../../services/monitoring-service';

/**
 * Transaction monitoring's rules as data (docs/monitoring.md#rules-as-data): the parameters of each rule,
 * the typologies that weigh them, and their alert and block thresholds. Compliance staff read and change
 * them; every change is a new version, audited, and applies to evaluations from then on.
 */
@Route('compliance/monitoring')
@Tags('Compliance')
@Security('jwt', ['compliance', 'admin'])
export class MonitoringController extends Controller {
  /**
   * The current monitoring rules and their version.
   * @summary Read the monitoring rules
   */
  @Get('rules')
  @Response<Problem>(401, 'Unauthenticated')
  @Response<Problem>(403, 'Not compliance staff, or an API key')
  @Example<MonitoringRulesView>({
    version: 2,
    created_by: '01a205da-1b2c-7d3e-8f40-515253545556',
    created_at: '2026-11-27T07:00:00.000Z',
    parameters: {
      windows: { recent_hours: 24, norm_days: 30 },
      structuring: { reporting_threshold_minor: '100000000', floor_minor: '90000000', count: { low: 2, high: 3 } },
      velocity: {
        min_count: 5,
        norm_percent: { low: 300, high: 1000 },
        tier_count: { unverified: { low: 10, high: 20 }, verified: { low: 30, high: 60 } },
      },
      pass_through: { min_in_minor: '5000000', out_percent: { low: 80, high: 95 } },
      fan_in: { payers: { low: 10, high: 25 } },
      fan_out: { payees: { low: 10, high: 25 } },
      new_account_high_value: { max_age_days: 7, amount_minor: { low: '10000000', high: '50000000' } },
      dormant_reactivation: { dormant_days: 90, amount_minor: { low: '5000000', high: '20000000' } },
      round_amounts: { unit_minor: '1000000', min_minor: '1000000', count: { low: 5, high: 10 } },
      p2p_wash_trading: { round_trips: { low: 2, high: 4 } },
    },
    typologies: [
      { id: 'structuring', weights: { structuring: 50, round_amounts: 15, velocity: 10 }, alert_threshold: 50, block_threshold: 130 },
    ],
  })
  @OperationId('getMonitoringRules')
  public async getRules(@Request() req: ExpressRequest & { user: Caller }): Promise<MonitoringRulesView> {
    return getMonitoringRules(req.user);
  }

  /**
   * Change the monitoring rules: the whole rule set, made from the version read (`based_on_version`). The
   * answer is the new version; evaluations already stored keep the version they used.
   * @summary Change the monitoring rules
   */
  @Put('rules')
  @Response<Problem>(400, 'Invalid rules: each problem names its field')
  @Response<Problem>(401, 'Unauthenticated')
  @Response<Problem>(403, 'Not compliance staff, or an API key')
  @Response<Problem>(409, 'The rules changed since `based_on_version`')
  @Example<MonitoringRulesView>({
    version: 2,
    created_by: '01a205da-1b2c-7d3e-8f40-515253545556',
    created_at: '2026-11-27T07:00:00.000Z',
    parameters: {
      windows: { recent_hours: 24, norm_days: 30 },
      structuring: { reporting_threshold_minor: '100000000', floor_minor: '90000000', count: { low: 2, high: 3 } },
      velocity: {
        min_count: 5,
        norm_percent: { low: 300, high: 1000 },
        tier_count: { unverified: { low: 10, high: 20 }, verified: { low: 30, high: 60 } },
      },
      pass_through: { min_in_minor: '5000000', out_percent: { low: 80, high: 95 } },
      fan_in: { payers: { low: 10, high: 25 } },
      fan_out: { payees: { low: 10, high: 25 } },
      new_account_high_value: { max_age_days: 7, amount_minor: { low: '10000000', high: '50000000' } },
      dormant_reactivation: { dormant_days: 90, amount_minor: { low: '5000000', high: '20000000' } },
      round_amounts: { unit_minor: '1000000', min_minor: '1000000', count: { low: 5, high: 10 } },
      p2p_wash_trading: { round_trips: { low: 2, high: 4 } },
    },
    typologies: [
      { id: 'structuring', weights: { structuring: 50, round_amounts: 15, velocity: 10 }, alert_threshold: 50, block_threshold: 130 },
    ],
  })
  @OperationId('changeMonitoringRules')
  public async changeRules(
    @Body() body: MonitoringRulesChange,
    @Request() req: ExpressRequest & { user: Caller },
  ): Promise<MonitoringRulesView> {
    return changeMonitoringRules(req.user, body);
  }
}
