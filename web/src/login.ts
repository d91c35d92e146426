// The login page's only script: keep the narrow the person opened (/#narrow/... sent to /login keeps its
// fragment) so that logging in lands them there, through the form's "next" field; and put the cursor
// where typing starts (the password, when the page came back with the address filled in).
const next = document.querySelector<HTMLInputElement>('input[name="next"]');
if (next && window.location.hash.startsWith('#narrow')) next.value = `/${window.location.hash}`;
const email = document.querySelector<HTMLInputElement>('input[name="username"]');
(email?.value ? document.querySelector<HTMLInputElement>('input[name="password"]') : email)?.focus();
