// The permission matrix, shard 2 of 3 (tests/api/permissions-matrix.ts).
import { permissionsMatrix } from './permissions-matrix';

permissionsMatrix(2, 3);
