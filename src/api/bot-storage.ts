import type { AnyRoute } from '../http/route';

export const botStorageRoutes: AnyRoute[] = [];
