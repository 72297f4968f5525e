"""How each Open5e model becomes an item: its kind, sub-type and the text of its entry."""

from __future__ import annotations

import contextlib
import json
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class KindSpec:
    """How one Open5e model becomes an item: its kind, sub-type and the text of its entry.

    The entry reads most-telling first (name, kind, key facts, description, then the other
    facts), because only its beginning is embedded.
    """

    kind: str
    label: str
    subtype: tuple[str, str] | None = None  # (payload key, value)
    facts: tuple[tuple[str, str], ...] = ()  # (label, field): one "Label: value" line each
    body: tuple[str, ...] = ("desc",)  # fields rendered as paragraphs, in order
    details: tuple[tuple[str, str], ...] = ()  # facts listed after the body


_OPTION = "character-option"

# Open5e model (the part after "api.") -> how its records become items.
KIND_SPECS: dict[str, KindSpec] = {
    "spell": KindSpec(
        "spell",
        "Spell",
        facts=(("Level", "spell_level"), ("School", "school"), ("Classes", "dnd_class")),
        body=("desc", "higher_level"),
        details=(
            ("Casting time", "casting_time"),
            ("Range", "range"),
            ("Duration", "duration"),
            ("Concentration", "requires_concentration"),
            ("Ritual", "can_be_cast_as_ritual"),
            ("Material", "material"),
        ),  # fmt: skip
    ),
    "monster": KindSpec(
        "creature",
        "Creature",
        facts=(
            ("Size", "size"),
            ("Type", "type"),
            ("Subtype", "subtype"),
            ("Alignment", "alignment"),
            ("Challenge", "challenge_rating"),
        ),  # fmt: skip
        body=(
            "desc",
            "special_abilities_json",
            "actions_json",
            "bonus_actions_json",
            "reactions_json",
            "legendary_desc",
            "legendary_actions_json",
        ),  # fmt: skip
        details=(
            ("Armor class", "armor_class"),
            ("Armor", "armor_desc"),
            ("Hit points", "hit_points"),
            ("Hit dice", "hit_dice"),
            ("Speed", "speed_json"),
            ("STR", "strength"),
            ("DEX", "dexterity"),
            ("CON", "constitution"),
            ("INT", "intelligence"),
            ("WIS", "wisdom"),
            ("CHA", "charisma"),
            ("Skills", "skills_json"),
            ("Damage vulnerabilities", "damage_vulnerabilities"),
            ("Damage resistances", "damage_resistances"),
            ("Damage immunities", "damage_immunities"),
            ("Condition immunities", "condition_immunities"),
            ("Senses", "senses"),
            ("Languages", "languages"),
            ("Environments", "environments_json"),
        ),  # fmt: skip
    ),
    "weapon": KindSpec(
        "equipment",
        "Weapon",
        ("item_type", "weapon"),
        facts=(
            ("Category", "category"),
            ("Damage", "damage_dice"),
            ("Damage type", "damage_type"),
            ("Properties", "properties_json"),
            ("Cost", "cost"),
            ("Weight", "weight"),
        ),  # fmt: skip
    ),
    "armor": KindSpec(
        "equipment",
        "Armor",
        ("item_type", "armor"),
        facts=(
            ("Category", "category"),
            ("Base AC", "base_ac"),
            ("Adds DEX", "plus_dex_mod"),
            ("Max bonus", "plus_max"),
            ("Strength", "strength_requirement"),
            ("Stealth disadvantage", "stealth_disadvantage"),
            ("Cost", "cost"),
            ("Weight", "weight"),
        ),  # fmt: skip
    ),
    "magicitem": KindSpec(
        "equipment",
        "Magic item",
        ("item_type", "magic-item"),
        facts=(("Type", "type"), ("Rarity", "rarity"), ("Attunement", "requires_attunement")),
    ),
    "charclass": KindSpec(
        _OPTION,
        "Class",
        ("option_type", "class"),
        facts=(("Hit dice", "hit_dice"), ("Spellcasting ability", "spellcasting_ability")),
        body=("desc", "equipment", "table"),
        details=(
            ("Hit points at 1st level", "hp_at_1st_level"),
            ("Hit points at higher levels", "hp_at_higher_levels"),
            ("Armor", "prof_armor"),
            ("Weapons", "prof_weapons"),
            ("Tools", "prof_tools"),
            ("Saving throws", "prof_saving_throws"),
            ("Skills", "prof_skills"),
            ("Subclasses", "subtypes_name"),
        ),  # fmt: skip
    ),
    "archetype": KindSpec(
        _OPTION, "Archetype", ("option_type", "archetype"), facts=(("Class", "char_class"),)
    ),
    "race": KindSpec(
        _OPTION,
        "Race",
        ("option_type", "race"),
        body=(
            "desc",
            "asi_desc",
            "traits",
            "age",
            "alignment",
            "size",
            "speed_desc",
            "languages",
            "vision",
        ),  # fmt: skip
    ),
    "subrace": KindSpec(
        _OPTION,
        "Subrace",
        ("option_type", "subrace"),
        facts=(("Race", "parent_race"),),
        body=("desc", "asi_desc", "traits"),
    ),
    "background": KindSpec(
        _OPTION,
        "Background",
        ("option_type", "background"),
        facts=(("Feature", "feature"),),
        body=("desc", "feature_desc", "suggested_characteristics"),
        details=(
            ("Skill proficiencies", "skill_proficiencies"),
            ("Tool proficiencies", "tool_proficiencies"),
            ("Languages", "languages"),
            ("Equipment", "equipment"),
        ),  # fmt: skip
    ),
    "feat": KindSpec(
        _OPTION,
        "Feat",
        ("option_type", "feat"),
        facts=(("Prerequisite", "prerequisite"),),
        body=("desc", "effects_desc_json"),
    ),
    "section": KindSpec(
        "rule", "Rules section", ("rule_type", "section"), (("Part of", "parent"),)
    ),
    "condition": KindSpec("rule", "Condition", ("rule_type", "condition")),
    "plane": KindSpec("rule", "Plane", ("rule_type", "plane"), (("Part of", "parent"),)),
}


def _field_text(fields: dict[str, Any], key: str, separator: str = "\n") -> str:
    """A field as readable text; `*_json` fields hold JSON in a string (lists of actions...)."""
    value = fields.get(key)
    if key.endswith("_json") and isinstance(value, str):
        with contextlib.suppress(json.JSONDecodeError):
            value = json.loads(value)
    return _as_text(value, separator)


def _as_text(value: Any, separator: str) -> str:
    """A value as readable text ('' for nothing worth showing)."""
    if value is None or value == "" or value == [] or value == {}:
        return ""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, dict):
        return ", ".join(f"{key} {item}" for key, item in value.items())
    if isinstance(value, list):
        lines = []
        for item in value:
            if isinstance(item, dict) and "name" in item:
                lines.append(f"{item['name']}. {item.get('desc', '')}".strip())
            else:
                lines.append(_as_text(item, separator))
        return separator.join(line for line in lines if line)
    return str(value).strip()


def _fact_lines(facts: tuple[tuple[str, str], ...], fields: dict[str, Any]) -> list[str]:
    return [f"{label}: {text}" for label, key in facts if (text := _field_text(fields, key, ", "))]


def entry_text(spec: KindSpec, name: str, fields: dict[str, Any]) -> str:
    """The whole entry as text: name, kind, key facts, description, other facts."""
    parts = ["\n".join([name, spec.label, *_fact_lines(spec.facts, fields)])]
    parts += [text for key in spec.body if (text := _field_text(fields, key))]
    if details := _fact_lines(spec.details, fields):
        parts.append("\n".join(details))
    return "\n\n".join(parts)
