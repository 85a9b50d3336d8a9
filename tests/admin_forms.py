"""Build the POST a browser would send for an admin change page, from its context."""


def _value(bound_field):
    value = bound_field.value()
    if value is None:
        return None
    if isinstance(value, bool):
        return "on" if value else None
    return value


def change_form_data(response) -> dict:
    data = {}
    form = response.context["adminform"].form
    for name in form.fields:
        value = _value(form[name])
        if value is not None:
            data[name] = value
    for inline in response.context["inline_admin_formsets"]:
        formset = inline.formset
        management = formset.management_form
        for name in management.fields:
            data[f"{formset.prefix}-{name}"] = management[name].value()
        for inline_form in formset.forms:
            for name in inline_form.fields:
                value = _value(inline_form[name])
                if value is not None:
                    data[inline_form.add_prefix(name)] = value
    data["_save"] = "Save"
    return data
