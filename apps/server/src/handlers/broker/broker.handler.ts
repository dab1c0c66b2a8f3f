import { PASSWORD_PLACEHOLDER } from '@lintel/commands';
import { signedIn, type HandlerContext, type SomeHandlers } from '../../pipeline/handler';
import { AppError } from '../../errors';
import { audit } from '../../audit/audit';
import {
  brokerCertificateProblem,
  certificateInfo,
  saveBrokerCertificate,
  type BrokerCertificate,
} from '../../devices/broker-settings';

/**
 * The MQTT broker (spec part 2 §7 "Broker service: status, restart {type}", "broker GET and POST multipart"):
 * its status and restart (`context.devices`, the gateway that runs or reaches it) and the embedded broker's
 * TLS certificate (table `broker_settings`). Installation-wide; a status is of the instance that answered.
 */
const status = (ctx: HandlerContext) => ({
  ...ctx.app.devices.brokerStatus(),
  instance: ctx.app.workers.instance,
});

function settingsReply(ctx: HandlerContext) {
  const tls = ctx.app.devices.tls;
  return {
    data: {
      tls_port: tls.embedded ? tls.port : null,
      certificate: tls.certificate ? certificateInfo(tls.certificate.cert) : null,
      key: tls.certificate ? PASSWORD_PLACEHOLDER : '',
    },
    applies: tls.embedded,
  };
}

async function setCertificate(ctx: HandlerContext, pem: BrokerCertificate | null) {
  const auth = signedIn(ctx);
  if (!ctx.app.devices.tls.embedded) throw new AppError('cant_perform_action', { reason: 'external_broker' });
  if (pem) {
    const problem = brokerCertificateProblem(pem);
    if (problem) throw new AppError('check_fields_data', { fields: [problem] });
  }
  try {
    await ctx.app.devices.setCertificate(pem);
  } catch (err) {
    if (err instanceof AppError) throw err;
    // the TLS stack refused it (a key it cannot use), or its port is taken: the words, never the PEM
    throw new AppError('cant_perform_action', {
      reason: 'broker_tls',
      error: String((err as Error)?.message ?? err).slice(0, 300),
    });
  }
  await saveBrokerCertificate(ctx.app, pem, auth.userId);
  const info = pem ? certificateInfo(pem.cert) : null;
  await audit(ctx.app.db, {
    projectId: auth.projectId,
    userId: auth.userId,
    action: 'broker_certificate_changed',
    ip: ctx.caller.ip,
    data: info
      ? { subject: info.subject, fingerprint: info.fingerprint, valid_to: info.valid_to }
      : { removed: true },
  });
  return settingsReply(ctx);
}

export const brokerHandlers = {
  'broker.status': async (ctx) => status(ctx),

  'broker.restart': async (ctx, args) => {
    const auth = signedIn(ctx);
    await ctx.app.devices.restart(args.type);
    const after = status(ctx);
    await audit(ctx.app.db, {
      projectId: auth.projectId,
      userId: auth.userId,
      action: 'broker_restarted',
      ip: ctx.caller.ip,
      data: { type: args.type, kind: after.kind, state: after.state },
    });
    return after;
  },

  'settings.broker_get': async (ctx) => settingsReply(ctx),

  'settings.broker_update': async (ctx, args) =>
    setCertificate(ctx, {
      cert: (await args.certificate.text()).trim(),
      key: (await args.key.text()).trim(),
    }),

  'settings.broker_delete': async (ctx) => setCertificate(ctx, null),
} satisfies SomeHandlers;
