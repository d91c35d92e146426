import type { AnyRoute } from '../http/route';

export const botRoutes: AnyRoute[] = [];
