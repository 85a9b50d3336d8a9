'use strict';
// What DRF's browsable API template leaves out (templates/rest_framework/api.html loads
// this after DRF's scripts): a name for the format menu's button, only a caret once
// Bootstrap's tooltip has taken its title; a role for the request forms' region, a div
// with a label; labels tied to their fields (DRF writes <label> without "for"); and a
// way to scroll a long answer from the keyboard.
{
    for (const button of document.querySelectorAll('.format-selection .dropdown-toggle')) {
        button.setAttribute('aria-label', 'Choose a format for the GET request');
    }
    for (const region of document.querySelectorAll('div.region[aria-label]')) {
        region.setAttribute('role', 'region');
    }
    document.querySelectorAll('form').forEach((form, formIndex) => {
        for (const group of form.querySelectorAll('.form-group')) {
            const label = group.querySelector('label');
            const field = group.querySelector('input:not([type=hidden]), select, textarea');
            if (!label || !field || label.htmlFor) continue;
            field.id = field.id || `form-${formIndex}-${field.name}`;
            label.htmlFor = field.id;
        }
    });
    for (const answer of document.querySelectorAll('.response-info pre, .request-info pre')) {
        answer.tabIndex = 0;
    }
}
