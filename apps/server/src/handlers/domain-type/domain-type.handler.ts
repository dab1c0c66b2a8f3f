import { familyHandlers } from '../../engine/family';
import { domainTypeStore } from './domain-type.store';

export const domainTypeHandlers = familyHandlers(domainTypeStore);
