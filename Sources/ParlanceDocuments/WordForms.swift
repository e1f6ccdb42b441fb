/// Word forms a suffix stemmer cannot join: irregular verbs and nouns (ran, ran → run;
/// children → child) and countries with their demonyms and languages (Danish → denmark),
/// so a question that says "Denmark" finds a transcript that says "Danish". Keys are
/// folded words (lower case, no diacritics); values are the term both forms index as.
enum WordForms {
    static let canonical: [String: String] = {
        var m: [String: String] = [:]
        let irregular: [String: [String]] = [
            "run": ["ran", "run", "runs", "running"], "go": ["went", "gone", "goes", "going"], "buy": ["bought", "buys", "buying"],
            "pay": ["paid", "pays", "paying"], "sell": ["sold", "sells", "selling"], "build": ["built", "builds", "building"],
            "begin": ["began", "begun", "begins", "beginning"], "teach": ["taught"], "think": ["thought"], "bring": ["brought"],
            "catch": ["caught"], "find": ["found"], "leave": ["left"], "meet": ["met"], "send": ["sent"], "spend": ["spent"],
            "take": ["took", "taken"], "write": ["wrote", "written"], "give": ["gave", "given"], "choose": ["chose", "chosen"],
            "grow": ["grew", "grown"], "know": ["knew", "known"], "drive": ["drove", "driven"], "eat": ["ate", "eaten"],
            "fall": ["fell", "fallen"], "feel": ["felt"], "hold": ["held"], "keep": ["kept"], "lose": ["lost"], "make": ["made"],
            "rise": ["rose", "risen"], "see": ["saw", "seen"], "speak": ["spoke", "spoken"], "steal": ["stole", "stolen"],
            "win": ["won"], "child": ["children"], "person": ["people"], "man": ["men"], "woman": ["women"], "mouse": ["mice"],
            "tooth": ["teeth"], "foot": ["feet"],
            // Units and their abbreviations.
            "kilo": ["kg", "kgs", "kilos", "kilogram", "kilograms", "kilogramme", "kilogrammes"],
            "kilometre": ["km", "kms", "kilometres", "kilometer", "kilometers"], "metre": ["metres", "meter", "meters"],
            "pound": ["lb", "lbs", "pounds"], "percent": ["per cent", "percentage", "pct"], "hour": ["hr", "hrs", "hours"],
            "minute": ["min", "mins", "minutes"], "litre": ["litres", "liter", "liters"],
        ]
        let places: [String: [String]] = [
            "denmark": ["danish", "dane", "danes"], "sweden": ["swedish", "swede", "swedes"], "norway": ["norwegian", "norwegians"],
            "finland": ["finnish", "finn", "finns"], "iceland": ["icelandic"], "germany": ["german", "germans"],
            "france": ["french"], "spain": ["spanish", "spaniard", "spaniards"], "portugal": ["portuguese"], "italy": ["italian", "italians"],
            "netherlands": ["dutch", "holland"], "belgium": ["belgian", "belgians"], "switzerland": ["swiss"], "austria": ["austrian"],
            "poland": ["polish", "pole", "poles"], "greece": ["greek", "greeks"], "ireland": ["irish"], "scotland": ["scottish", "scot", "scots"],
            "wales": ["welsh"], "england": ["english"], "britain": ["british", "briton", "britons", "uk"], "america": ["american", "americans", "usa"],
            "canada": ["canadian", "canadians"], "mexico": ["mexican", "mexicans"], "brazil": ["brazilian"], "argentina": ["argentinian", "argentine"],
            "chile": ["chilean"], "peru": ["peruvian"], "colombia": ["colombian"], "japan": ["japanese"], "china": ["chinese"],
            "korea": ["korean", "koreans"], "india": ["indian", "indians"], "vietnam": ["vietnamese"], "thailand": ["thai"],
            "turkey": ["turkish", "turk", "turks"], "egypt": ["egyptian"], "russia": ["russian", "russians"], "ukraine": ["ukrainian"],
            "czechia": ["czech"], "hungary": ["hungarian"], "romania": ["romanian"], "australia": ["australian", "australians"],
            "zealand": ["zealander", "zealanders"], "kenya": ["kenyan"], "nigeria": ["nigerian"], "israel": ["israeli"],
            "iran": ["iranian", "persian"], "morocco": ["moroccan"], "europe": ["european", "europeans"], "africa": ["african"],
            "asia": ["asian"], "dinamarca": ["danes", "danesa"], "espana": ["espanol", "espanola", "espanoles"], "francia": ["frances", "francesa"],
        ]
        for (base, forms) in irregular.merging(places, uniquingKeysWith: { a, _ in a }) {
            m[base] = base
            for f in forms { m[f] = base }
        }
        return m
    }()
}
