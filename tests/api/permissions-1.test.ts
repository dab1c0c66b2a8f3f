// The permission matrix, shard 1 of 3 (tests/api/permissions-matrix.ts).
import { permissionsMatrix } from './permissions-matrix';

permissionsMatrix(1, 3);
