'use strict';
// Swagger UI's dark mode follows the admin's theme (html[data-theme], set by the admin's
// theme.js from the choice its toggle stored): dark, or auto when the browser prefers dark.
{
    const root = document.documentElement;
    const prefersDark = window.matchMedia('(prefers-color-scheme: dark)');
    const follow = () => {
        const theme = root.dataset.theme || 'auto';
        root.classList.toggle('dark-mode', theme === 'dark' || (theme === 'auto' && prefersDark.matches));
    };
    new MutationObserver(follow).observe(root, {attributes: true, attributeFilter: ['data-theme']});
    prefersDark.addEventListener('change', follow);
    follow();
}
