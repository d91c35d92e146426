// Small inline icons (drawn by Preact as SVG elements, so no icon font and no image requests).
const common = { width: 14, height: 14, viewBox: '0 0 16 16', 'aria-hidden': 'true' as const, focusable: 'false' as const, class: 'icon' };

export const HashIcon = () => (
  <svg {...common}>
    <path d="M6 1.5 4.5 14.5M11.5 1.5 10 14.5M2 5.5h12.5M1.5 10.5H14" stroke="currentColor" stroke-width="1.6" fill="none" stroke-linecap="round" />
  </svg>
);

export const LockIcon = () => (
  <svg {...common}>
    <rect x="3" y="7" width="10" height="7.5" rx="1.5" fill="currentColor" />
    <path d="M5.2 7V5a2.8 2.8 0 0 1 5.6 0v2" stroke="currentColor" stroke-width="1.6" fill="none" />
  </svg>
);

export const PeopleIcon = () => (
  <svg {...common}>
    <circle cx="5.5" cy="5" r="2.5" fill="currentColor" />
    <circle cx="11" cy="5.5" r="2" fill="currentColor" opacity=".75" />
    <path d="M1 14c0-3 2-4.8 4.5-4.8S10 11 10 14z" fill="currentColor" />
    <path d="M10.6 9.3c2.3 0 4.4 1.5 4.4 4.7h-4" fill="currentColor" opacity=".75" />
  </svg>
);

export const PersonIcon = () => (
  <svg {...common}>
    <circle cx="8" cy="5" r="3" fill="currentColor" />
    <path d="M2 15c0-3.6 2.7-5.6 6-5.6s6 2 6 5.6z" fill="currentColor" />
  </svg>
);

export const StarIcon = ({ filled }: { filled: boolean }) => (
  <svg {...common}>
    <path
      d="M8 1.3 10 5.6l4.6.5-3.4 3.1 1 4.6L8 11.5l-4.1 2.3 1-4.6L1.4 6.1 6 5.6z"
      fill={filled ? 'currentColor' : 'none'}
      stroke="currentColor"
      stroke-width="1.3"
      stroke-linejoin="round"
    />
  </svg>
);

export const MenuIcon = () => (
  <svg {...common} width={20} height={20}>
    <path d="M2 4h12M2 8h12M2 12h12" stroke="currentColor" stroke-width="1.6" stroke-linecap="round" />
  </svg>
);
