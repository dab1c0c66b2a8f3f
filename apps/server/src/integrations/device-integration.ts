import { sql, type Kysely } from 'kysely';
import type { DB } from '../db/schema';
import { AppError } from '../errors';

/**
 * The integration a device's Axxon One camera names (`device_settings.integration_axxon.integration_id`) must
 * be one of the project's (`invalid_related_entity`) serving the device's group (`integration_not_allowed`:
 * spec part 2 §8 "integration not allowed for user or device"). Checked after the device's write, on what it
 * became: a move to another group is checked as a change of the integration is.
 */
export async function assertDeviceIntegration(
  q: Kysely<DB>,
  projectId: number,
  deviceId: number,
): Promise<void> {
  const device = (
    await sql<{ domain_id: number | null; integration_id: string | null }>`
      select domain_id, device_settings -> 'integration_axxon' ->> 'integration_id' as integration_id
      from devices where id = ${deviceId}`.execute(q)
  ).rows[0];
  if (!device?.integration_id) return;
  const integrationId = Number(device.integration_id);
  const found = (
    await sql<{ serves: boolean }>`
      select exists (select 1 from integration_domains d
        where d.integration_id = i.id and d.domain_id = ${device.domain_id}) as serves
      from integrations i where i.id = ${integrationId} and i.project_id = ${projectId}`.execute(q)
  ).rows[0];
  if (!found)
    throw new AppError('invalid_related_entity', {
      entity: 'integration',
      field: 'device_settings.integration_axxon.integration_id',
      ids: [integrationId],
    });
  if (!found.serves)
    throw new AppError('integration_not_allowed', {
      id: integrationId,
      field: 'device_settings.integration_axxon.integration_id',
    });
}
