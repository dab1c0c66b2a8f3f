import type { ColumnType, Generated, Kysely } from 'kysely';
import type { ImportReport, ImportRowError } from '@lintel/commands';
import type { DB } from '../../db/schema';

type JsonDefault<T> = ColumnType<T, string | undefined, string>;

/** migrations/0004_user_import.sql: an import session. */
export interface UserImportsTable {
  id: string;
  project_id: number;
  user_id: number;
  file_name: Generated<string>;
  status: ColumnType<'open' | 'committed', 'open' | 'committed' | undefined, 'open' | 'committed'>;
  rows_total: Generated<number>;
  rows_invalid: Generated<number>;
  report: ColumnType<ImportReport | null, string | null | undefined, string | null>;
  created_at: ColumnType<Date, Date | string | undefined, never>;
  updated_at: ColumnType<Date, Date | string | undefined, Date | string>;
}

/** One checked row of an import: what it will insert, or its problems. */
export interface UserImportRowsTable {
  import_id: string;
  line: number;
  login: string | null;
  login_key: string | null;
  email: string | null;
  email_key: string | null;
  name: string | null;
  description: Generated<string>;
  role_id: number | null;
  domain_ids: JsonDefault<number[]>;
  marker_ids: JsonDefault<number[]>;
  profile: JsonDefault<Record<string, unknown>>;
  elevator_access_disabled: Generated<boolean>;
  is_group_admin: Generated<boolean>;
  password_hash: string | null;
  errors: ColumnType<Omit<ImportRowError, 'line'>[] | null, string | null, string | null>;
}

export type ImportTables = {
  user_imports: UserImportsTable;
  user_import_rows: UserImportRowsTable;
};

export type ImportDB = DB & ImportTables;

/** The database with the import's own tables, which the shared schema does not list. */
export const withImportTables = (q: Kysely<DB>): Kysely<ImportDB> => q.withTables<ImportTables>();
