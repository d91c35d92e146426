import type { AnyRoute } from '../http/route';

export const profileFieldRoutes: AnyRoute[] = [];
