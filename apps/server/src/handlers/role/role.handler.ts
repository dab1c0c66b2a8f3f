import { familyHandlers } from '../../engine/family';
import { roleStore } from './role.store';

export const roleHandlers = familyHandlers(roleStore);
