// The login page's only script: keep the narrow the person opened (/#narrow/... sent to /login keeps its
// fragment) so that logging in lands them there, through the form's "next" field.
const next = document.querySelector<HTMLInputElement>('input[name="next"]');
if (next && window.location.hash.startsWith('#narrow')) next.value = `/${window.location.hash}`;
document.querySelector<HTMLInputElement>('input[name="username"]')?.focus();
