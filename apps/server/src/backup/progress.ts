import { EventEmitter } from 'node:events';

/**
 * How far the backups of this process have gone: `make` ({backupId, rows}) as pages are written, `apply`
 * ({projectId, phase: 'load' | 'upsert', table, rows}) as rows are loaded and as each table is written. The list overlays it on backups being made here; a test's
 * child server prints it (tests/support/backup-child.ts) to be killed in the middle of an apply.
 */
export const backupProgress = new EventEmitter();
backupProgress.setMaxListeners(0);
