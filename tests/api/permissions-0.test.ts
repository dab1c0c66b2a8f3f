// The permission matrix, shard 0 of 3 (tests/api/permissions-matrix.ts).
import { permissionsMatrix } from './permissions-matrix';

permissionsMatrix(0, 3);
